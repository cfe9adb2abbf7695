"""Issue 37: prefix reuse (quant/prefix.py). A variant that runs the reference's modes up to its first changed
module starts from the reference's kept module outputs; its logits are the same bits as a full run's. A skip
connection around the changed module, a module called twice, a batch not recorded, module calls that differ
between batches and a changed weight: each handled (or refused) as the module says."""
import gc
import weakref

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from opkit.evaluate.variants import SimVariant
from opkit.quant import prefix as P
from opkit.quant.calibrate import calibrate
from opkit.quant.config import default_config
from opkit.quant.graph import read_graph
from opkit.quant.variant import build_variant

POLICIES = ("amct-fake-quant", "cann-force-fp16")


class Chain(nn.Module):
    """conv -> conv -> conv (the middle one changes) -> pool -> linear; one activation module used twice."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3), nn.Conv2d(8, 8, 3)
        self.act = nn.ReLU()                     # called twice: never a kept output
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.act(self.c1(x))
        x = self.act(self.c2(x))
        return self.fc(F.adaptive_avg_pool2d(self.c3(x), 1).flatten(1))


class Skip(nn.Module):
    """h = c1(x); the changed c2 sits inside a residual: out = fc(pool(h + c2(h)) ...)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.c3 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        h = F.relu(self.c1(x).mul_(0.5))         # in place on c1's output: a kept output handed out is a copy
        h = h + self.c2(h)                       # the skip around c2 reads c1's (kept) output after c2 ran
        h.add_(1.0)
        return self.fc(F.adaptive_avg_pool2d(self.c3(h), 1).flatten(1))


def _variants(model, changed, policy):
    torch.manual_seed(0)
    x = torch.randn(40, 3, 12, 12)
    cfg = default_config(model)
    g = read_graph(model, (x[:2],))
    recs = calibrate(model, x[:16], cfg, g)
    dev = policy != "amct-fake-quant"               # ATC's fusions as quantize() deploys them
    base = build_variant(model, cfg, recs, g, atc_conv_bn=dev, requant=dev, name="base")
    other = build_variant(model, cfg.with_float([changed]), recs, g, atc_conv_bn=dev, requant=dev, name="other")
    base.policy = other.policy = policy
    return x, base.as_variant(), other.as_variant()


def _batches(x, n=8):
    return [x[i:i + n].clone() for i in range(0, len(x), n)]      # new tensors each time, as a data set gives


def _record(model, ref, x, budget_mb=64):
    cache = P.PrefixCache(model, ref, batches=len(_batches(x)), budget_mb=budget_mb)
    run = P.Recorder(ref, cache).prepare(model)
    full = ref.prepare(model)
    for b in _batches(x):
        assert torch.equal(run(b), full(b))        # recording does not change the reference's own outputs
    return cache


def _replayed(model, cache, v, x, first=None):
    """``v`` run from ``cache`` on every batch: the same logits as a full run; every batch served, the first too
    (``first``; default ``P.SERVE_FIRST``: it made the plan from its own copies) or all but the first."""
    skip = cache.plan_for(v)
    assert skip, cache.why
    run, full = P.Replayer(v, cache, skip).prepare(model), v.prepare(model)
    served = cache.served
    for b in _batches(x):
        a, f = run(b), full(b)
        assert a.dtype == f.dtype and torch.equal(a, f)
    first = P.SERVE_FIRST if first is None else first
    assert cache.served - served == len(_batches(x)) - (0 if first else 1)
    return skip


def test_a_changed_middle_layer_gives_the_same_logits():
    for policy in POLICIES:
        torch.manual_seed(1)
        m = Chain().eval()
        x, base, other = _variants(m, "c2", policy)
        cache = _record(m, base, x)
        if policy == "amct-fake-quant":
            assert P.changed(base, other) == {"c2"}
            assert _replayed(m, cache, other, x) == {"c1"}   # act is called twice: recomputed, c1's output given
        else:   # AscendRequant: c1 hands c2 its requantized codes, so c1 changes with c2
            assert P.changed(base, other) == {"c1", "c2"} and cache.plan_for(other) is None
            x, base, other = _variants(m, "c3", policy)
            cache = _record(m, base, x)
            assert P.changed(base, other) == {"c3"}      # no requant fusion into c3 here: c2 unchanged
            assert _replayed(m, cache, other, x) == {"c1", "c2"}
        # the reference itself (nothing changed): the model's output given whole
        assert _replayed(m, cache, base, x) == {""}
        assert cache.skip_for(cache.start["fc"]) == {"c1", "c2", "c3"}   # a change at fc: all before it given


def test_a_skip_connection_around_the_changed_layer():
    for policy in POLICIES:
        torch.manual_seed(2)
        m = Skip().eval()
        x, base, other = _variants(m, "c2", policy)
        cache = _record(m, base, x)
        assert _replayed(m, cache, other, x) == {"c1"}
        assert _replayed(m, cache, other, x) == {"c1"}      # again: the kept outputs were not written into
        # the change at c3 (after the in-place add): c1 and c2 given, the residual add and add_ recomputed
        x3, base3, other3 = _variants(m, "c3", policy)
        cache3 = _record(m, base3, x3)
        assert _replayed(m, cache3, other3, x3) == {"c1", "c2"}
        # the change at fc: c3 given too; the residual add that reads c2's output runs just before c3 starts,
        # outside every given module -- c2's output is kept, not a placeholder
        xf, basef, otherf = _variants(m, "fc", policy)
        cachef = _record(m, basef, xf)
        live, dead = cachef.plans[cachef.start["fc"]]
        assert "c2" in live and "c3" in live and _replayed(m, cachef, otherf, xf) == {"c1", "c2", "c3"}


def test_the_first_changed_layer_gives_nothing_to_skip():
    m = Chain().eval()
    x, base, other = _variants(m, "c1", "amct-fake-quant")
    cache = _record(m, base, x)
    assert cache.plan_for(other) is None


def test_a_changed_weight_drops_the_cache():
    m = Chain().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    cache = _record(m, base, x)
    assert cache.plan_for(other)
    with torch.no_grad():
        m.c1.weight.mul_(1.5)                      # before the changed layer: the kept outputs are stale
    assert cache.plan_for(other) is None and not cache.valid and "changed" in cache.why
    m2 = Chain().eval()
    x, base, other = _variants(m2, "c3", "amct-fake-quant")
    cache = _record(m2, base, x)
    m2.c1.weight.data = m2.c1.weight.data.clone()  # a .data swap: a new storage
    assert cache.plan_for(other) is None


def test_a_batch_not_recorded_runs_in_full():
    m = Chain().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    cache = _record(m, base, x)
    run = P.Replayer(other, cache, cache.plan_for(other)).prepare(m)
    y = torch.randn(8, 3, 12, 12)
    served = cache.served
    assert torch.equal(run(y), other.prepare(m)(y)) and cache.served == served


def test_module_calls_that_differ_between_batches_are_not_reused():
    class Branchy(Chain):
        def forward(self, x):
            big = bool(x.abs().amax() > 100)       # data-dependent: c2 runs for some batches only
            x = self.act(self.c1(x))
            if not big:
                x = self.act(self.c2(x))
            else:
                x = F.pad(x, (1, 1, 1, 1))[..., 1:-3, 1:-3]
            return self.fc(F.adaptive_avg_pool2d(self.c3(x), 1).flatten(1))
    torch.manual_seed(3)
    m = Branchy().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    x = torch.cat([x[:8] * 1000.0, x[8:]])     # the first batch takes one branch, the rest the other
    cache = _record(m, base, x)
    assert not cache.valid and "differ" in cache.why and cache.plan_for(other) is None


def test_a_model_with_a_forward_hook_is_not_served():
    m = Chain().eval()
    _, base, _ = _variants(m, "c3", "amct-fake-quant")
    assert P.eligible(base, m)
    h = m.c1.register_forward_hook(lambda mod, a, out: out * 2)
    try:
        assert not P.eligible(base, m)
    finally:
        h.remove()
    assert not P.eligible(SimVariant("fp32"), m)      # the plain FP32 run: nothing of the engine's to reuse


def test_modes_compare_by_content():
    m = Chain().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    _, base2, _ = _variants(m, "c3", "amct-fake-quant")     # built again: equal modes, maybe other objects
    assert P.changed(base, base2) == set()
    assert P.changed(base, SimVariant("x", policy="cann-force-fp16", layers=base.layers)) is None


def test_the_memory_budget():
    m = Chain().eval()
    x, base, other = _variants(m, "c2", "amct-fake-quant")
    assert _record(m, base, x).plan_for(other) == {"c1"}
    tiny = _record(m, base, x, budget_mb=1e-6)
    assert tiny.plan_for(other) is None and not tiny.covered and "budget" in tiny.why and not any(tiny.outs)
    # room for the inputs (kept to find a batch again: 40 x 3 x 12 x 12 float32) and the model's output (5 batches
    # of 8 x 5 float32 logits) only: a variant equal to the reference is served (the latest first change), one
    # changing c2 runs in full
    some = _record(m, base, x, budget_mb=(40 * 3 * 12 * 12 * 4 + 5 * 8 * 5 * 4 * 1.5) / 2 ** 20)
    assert [k for _, k in some.covered] == [""] and some.keep == {""}
    # batch 0's copies of every output (its room: the budget less its input) run out before the model's output:
    # batch 0 runs in full
    assert some.xs[0] is None and some.plan_for(other) is None and _replayed(m, some, base, x, first=False) == {""}


def test_outputs_nothing_reads_get_a_placeholder():
    """A chain (nn.Sequential): for a change at c3, c2's output is read only by r2, skipped too -- a placeholder
    (NaN); r2's output (read by c3) is kept. r1 is an in-place ReLU: never skipped, it reruns on a copy of c1's
    (kept) output. The logits are the same."""
    from collections import OrderedDict
    torch.manual_seed(4)
    m = nn.Sequential(OrderedDict(c1=nn.Conv2d(3, 8, 3), r1=nn.ReLU(inplace=True), c2=nn.Conv2d(8, 8, 3),
                                  r2=nn.ReLU(), c3=nn.Conv2d(8, 8, 3), pool=nn.AdaptiveAvgPool2d(1),
                                  flat=nn.Flatten(), fc=nn.Linear(8, 5))).eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    cache = _record(m, base, x)
    assert cache.writes == {"r1", "flat"}       # flat returns a view of its input: rerun too
    live, dead = cache.plans[cache.start["c3"]]
    assert live == {"c1", "r2"} and dead == {"c2"}
    assert _replayed(m, cache, other, x) == {"c1", "c2", "r2"}
    x2, base2, other2 = _variants(m, "c2", "amct-fake-quant")
    cache2 = _record(m, base2, x2)
    assert cache2.plans[cache2.start["c2"]] == ({"c1"}, set())
    assert _replayed(m, cache2, other2, x2) == {"c1"}


def test_an_uncovered_first_change_uses_an_earlier_plan():
    """The budget holds c1's output (read by the shared act) but not c2's as well: a variant changing c3 starts
    from the plan of the first change at c2 (skips c1 only), and its logits are the same."""
    torch.manual_seed(5)
    m = Chain().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    c1_bytes = 40 * 8 * 10 * 10 * 4                       # 40 samples x c1's [8, 10, 10] float32 output
    cache = _record(m, base, x, budget_mb=(40 * 3 * 12 * 12 * 4 + c1_bytes + 40 * 5 * 4 + 1000) / 2 ** 20)
    assert sorted(k for _, k in cache.covered) == ["", "c2"]
    assert _replayed(m, cache, other, x) == {"c1"}


def test_a_bad_budget_is_refused():
    import pytest
    import opkit
    from opkit.errors import OpkitError
    m = Chain().eval()
    x = torch.randn(8, 3, 12, 12)
    for bad in (-1.0, float("nan")):
        with pytest.raises(OpkitError, match="prefix_mb must be >= 0"):
            opkit.quantize(m, x, (x, torch.zeros(8, dtype=torch.long)), prefix_mb=bad)


@pytest.mark.parametrize("first", [False, True])
def test_quantize_serves_search_variants_with_the_same_report(monkeypatch, first):
    """opkit.quantize on the encoder: with reuse on, search variants are served from the base's kept outputs
    (counted; the first batch too with ``SERVE_FIRST``), and the report equals the one with reuse off, every row's
    class per sample included."""
    monkeypatch.setattr(P, "SERVE_FIRST", first)
    import sys
    from pathlib import Path
    import opkit
    from opkit.quant import scoring
    sys.path.insert(0, str(Path(__file__).parent))
    from quantdata import encoder as E
    m = E.encoder().float().eval()
    x = E.patches(96, 1).float()
    with torch.no_grad():
        y = m(x).argmax(-1)
    served, scorers = [], []
    orig = scoring.Scorer._prefixed

    def counting(self, sv):
        got = orig(self, sv)
        if self not in scorers:
            scorers.append(self)
        if isinstance(got, P.Replayer):
            served.append(sv.name)
        return got
    monkeypatch.setattr(scoring.Scorer, "_prefixed", counting)
    reps = {}
    for on in (False, True):
        monkeypatch.setattr(scoring, "REUSE_PREFIX", on)
        reps[on] = opkit.quantize(m, E.patches(16, 2).float(), (x, y), policy="amct-fake-quant", target_drop=3.0,
                                  batch_size=32, workers=1)
    assert len(served) >= 10 and any(n.startswith("search-") for n in served)
    # every batch (96 samples in batches of 32) of every evaluation built from kept outputs started from them
    sc = scorers[-1]
    # three labelled batches: the first made the plan and is served from its own copies (SERVE_FIRST) or runs in
    # full, the other two are served
    per = 3 if first else 2
    assert sc.prefix.valid and sc.replayed == len(served) and sc.prefix.served == per * len(served)
    status = reps[True].eval_backends[-1]
    assert f"served {per * len(served)} batches of {len(served)} evaluations" in status
    # review q12 L1: the status line says how batch 0 ran, and why when in full
    assert ("(batch 0 served)" if first else "(batch 0 in full: SERVE_FIRST off)") in status, status
    assert reps[False].eval_backends[-1].startswith("prefix reuse: off")
    a, b = reps[False].to_dict(), reps[True].to_dict()
    for k in a:
        if k not in ("eval_seconds", "seconds", "eval_backends"):
            assert repr(a[k]) == repr(b[k]), k
    assert reps[False].predictions == reps[True].predictions


class Alias(nn.Module):
    """c1 -> an in-place ReLU called once; the pre-activation name h is read after the changed c2 (h is g)."""

    def __init__(self):
        super().__init__()
        self.c1, self.act = nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True)
        self.c2, self.fc = nn.Conv2d(8, 8, 3, padding=1), nn.Linear(8, 5)

    def forward(self, x):
        h = self.c1(x)
        g = self.act(h)
        return self.fc(F.adaptive_avg_pool2d(self.c2(g) + h, 1).flatten(1))


class Discard(Alias):
    """An in-place module whose return value the forward drops."""

    def forward(self, x):
        h = self.c1(x) * 1.0
        self.act(h)
        return self.fc(F.adaptive_avg_pool2d(self.c2(h), 1).flatten(1))


class AddInto(nn.Module):
    """A block that writes into its input (``x += f(x)``), a tensor from outside its span."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        x += self.c(x)
        return x * 0.5


class Into(Alias):
    def __init__(self):
        super().__init__()
        self.blk = AddInto()

    def forward(self, x):
        h = self.c1(x) + 0.0
        y = self.blk(h)
        return self.fc(F.adaptive_avg_pool2d(self.c2(y) + h, 1).flatten(1))


def test_a_module_writing_into_its_input_is_never_skipped():
    """Review q8 #1: skipped, an in-place module's write misses the other names for its tensor (the logits
    differed in every batch). It is recorded as a writer and reruns; the logits are the same bits."""
    for cls, writer, skip in ((Alias, "act", {"c1"}), (Discard, "act", {"c1"}), (Into, "blk", {"c1", "blk.c"})):
        torch.manual_seed(6)
        m = cls().eval()
        x, base, other = _variants(m, "c2", "amct-fake-quant")
        cache = _record(m, base, x)
        assert _replayed(m, cache, other, x) == skip, cls.__name__      # the same logits, batch by batch
        assert writer in cache.writes and writer not in cache.cacheable, cls.__name__


def test_a_non_persistent_buffer_change_drops_the_cache():
    """Review q8 #3: a non-persistent buffer (not in state_dict) read inside a skipped block."""
    class Sub(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 8, 3, padding=1)
            self.register_buffer("g", torch.ones(1, 8, 1, 1), persistent=False)

        def forward(self, x):
            return self.c(x) * self.g

    class NP(nn.Module):
        def __init__(self):
            super().__init__()
            self.b, self.c2, self.fc = Sub(), nn.Conv2d(8, 8, 3, padding=1), nn.Linear(8, 5)

        def forward(self, x):
            return self.fc(F.adaptive_avg_pool2d(self.c2(self.b(x)), 1).flatten(1))
    m = NP().eval()
    x, base, other = _variants(m, "c2", "amct-fake-quant")
    cache = _record(m, base, x)
    assert cache.plan_for(other)
    m.b.g.mul_(3)
    assert cache.plan_for(other) is None and "changed" in cache.why


def test_the_cache_never_holds_more_than_the_budget(monkeypatch):
    """Review q8 #2: what the cache holds (kept outputs and the inputs), measured after every batch, stays within
    the budget, for budgets from ample to barely enough; the first batch's copies of every output (made before the
    plan) leave room for its input."""
    from collections import OrderedDict
    torch.manual_seed(7)
    m = nn.Sequential(OrderedDict(c1=nn.Conv2d(3, 8, 3), r1=nn.ReLU(), c2=nn.Conv2d(8, 8, 3),
                                  r2=nn.ReLU(), c3=nn.Conv2d(8, 8, 3), pool=nn.AdaptiveAvgPool2d(1),
                                  flat=nn.Flatten(), fc=nn.Linear(8, 5))).eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    held = lambda c: sum(t.numel() * t.element_size() for t in c.xs if t is not None) + \
        sum(t.numel() * t.element_size() for o in c.outs for t in o.values())      # noqa: E731
    peaks = []
    orig = P.PrefixCache.record

    def measured(self, x, events, outs, uses, metas, writes=()):
        copies = sum(t.numel() * t.element_size() for t in outs.values())
        if self.events is None:                    # batch 0's copies of every output (SERVE_FIRST): room for x left
            assert copies <= max(self.budget - x.numel() * x.element_size(), 0), (copies, self.budget)
        orig(self, x, events, outs, uses, metas, writes)
        peaks.append((held(self) + copies, self.budget))
        assert held(self) == self.held
    monkeypatch.setattr(P.PrefixCache, "record", measured)
    inputs = 40 * 3 * 12 * 12 * 4
    for mb in (64, (inputs + 40 * 8 * 8 * 8 * 4 + 40 * 5 * 4) / 2 ** 20, inputs / 2 ** 20, 1e-3):
        peaks.clear()
        cache = _record(m, base, x, budget_mb=mb)
        assert peaks and all(p <= b for p, b in peaks), (mb, peaks)
        if cache.valid:
            assert len(cache.xs) == cache.batches
    assert not cache.valid and not cache.xs         # 1 KB: not even the inputs fit -- nothing recorded


def test_placeholders_are_nan_and_reuse_refuses_to_be_pickled():
    """Review q8 #5/#6: a placeholder read by mistake poisons the logits (NaN); a Recorder or Replayer sent to a
    worker process fails loudly instead of recording into the worker's copy."""
    import pickle
    import pytest
    assert torch.isnan(P._poison((2, 3), torch.float16)).all()
    assert (P._poison((2,), torch.int32) == torch.iinfo(torch.int32).min).all()
    m = Chain().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    cache = _record(m, base, x)
    for w in (P.Recorder(base, cache), P.Replayer(other, cache, {"c1"})):
        with pytest.raises(TypeError, match="in process only"):
            pickle.dumps(w)


def test_the_cli_passes_prefix_mb(tmp_path, monkeypatch):
    """Review q8 #7: ``opkit quant --prefix-mb N`` reaches quantize (default: the library's budget)."""
    from click.testing import CliRunner
    from opkit.cli import cli
    from opkit.quant import run as R
    got = []

    def fake(*a, **kw):
        got.append(kw)
        raise SystemExit(0)                   # the arguments are all this test needs
    monkeypatch.setattr(R, "quantize", fake)
    torch.save({"x": torch.randn(4, 3, 12, 12)}, tmp_path / "calib.pt")
    torch.save({"x": torch.randn(4, 3, 12, 12), "y": torch.zeros(4, dtype=torch.long)}, tmp_path / "val.pt")
    spec = f"{tmp_path / 'm.py'}:make"
    (tmp_path / "m.py").write_text("import torch\ndef make():\n    return torch.nn.Conv2d(3, 2, 3)\n")
    args = ["quant", spec, "--calib", str(tmp_path / "calib.pt"), "--data", str(tmp_path / "val.pt"), "--workers", "1"]
    for extra, want in (([], P.DEFAULT_MB), (["--prefix-mb", "0"], 0.0), (["--prefix-mb", "512"], 512.0)):
        CliRunner().invoke(cli, args + extra)
        assert got and got[-1]["prefix_mb"] == want, extra
    res = CliRunner().invoke(cli, args + ["--prefix-mb", "-1"])
    assert res.exit_code != 0 and "--prefix-mb" in res.output


def test_reuse_follows_evaluates_in_process_rule():
    """Review q8 #6: reuse is on exactly when evaluate() runs in this process -- a labelled set in one shard runs
    in process with several workers too, and so reuse is on there."""
    from opkit.evaluate.runner import in_process
    from opkit.quant.scoring import Run, Scorer
    assert in_process(96, 32, 4, None, "m.py:f") is False          # 3 batches over 4 workers: a pool
    assert in_process(96, 32, 4, None, None) is True                # a module without a spec: in process
    assert in_process(96, 32, 1, None, "m.py:f") is True
    assert in_process(32, 32, 4, None, "m.py:f") is True            # one shard: in process
    assert in_process(96, 32, 1, "auto", None) is False             # Ray
    sc = Scorer.__new__(Scorer)
    sc.data, sc.prefix, sc._prefix_why = [0] * 32, None, ""
    sc.run = Run(32, 4, None, "m.py:f", P.DEFAULT_MB)
    assert sc.reuse_allowed() and sc.prefix_status().startswith("prefix reuse: on")
    sc._prefix_why = "forward hooks"        # review fixq8 N6: a base that cannot be recorded is not "on"
    assert sc.prefix_status() == "prefix reuse: off (forward hooks)"
    sc.data = [0] * 96
    assert not sc.reuse_allowed() and "in 4 worker processes" in sc.prefix_status()
    sc.run = Run(32, 1, "auto", None, P.DEFAULT_MB)
    assert "on Ray" in sc.prefix_status() and "workers=1 turns it on" not in sc.prefix_status()


def test_a_model_drawing_random_numbers_is_not_reused():
    """Review q8 #10: a module drawing random numbers in eval mode, skipped, would move the RNG for what follows."""
    class Noisy(Chain):
        def forward(self, x):
            return super().forward(x + 0.01 * torch.randn_like(x))
    m = Noisy().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    cache = P.PrefixCache(m, base, batches=len(_batches(x)))
    run = P.Recorder(base, cache).prepare(m)
    for b in _batches(x):
        run(b)
    assert not cache.valid and "random" in cache.why and cache.plan_for(other) is None


def test_a_reference_mode_changed_in_place_drops_the_cache():
    """Review q8 #8: same_mode compares live objects; a field of the reference's mode written after the recording
    (as add_requant writes requant_to) would leave the kept outputs stale."""
    m = Chain().eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    cache = _record(m, base, x)
    assert cache.plan_for(other)
    base.layers["c1"].scale_d = base.layers["c1"].scale_d * 2
    assert cache.plan_for(other) is None and "modes changed" in cache.why


class Ema(nn.Module):
    """A buffer the forward updates (a running average that moves in eval too), added into the output."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3)
        self.fc = nn.Linear(8, 5)
        self.register_buffer("ema", torch.zeros(()))

    def forward(self, x):
        h = self.c1(x)
        self.ema.mul_(0.9).add_(0.1 * h.mean())
        return self.fc(F.adaptive_avg_pool2d(self.c2(h), 1).flatten(1)) + self.ema


def test_a_forward_writing_a_buffer_runs_each_batch_once_and_drops_the_cache():
    # Batch 0 used to run twice (plan, then copies): the buffer moved one step more and the reference's own logits
    # changed with reuse on. Now each batch runs once and the write drops the cache.
    torch.manual_seed(3)
    m = Ema().eval()
    x, base, _ = _variants(m, "c2", "amct-fake-quant")
    m2 = Ema().eval()
    m2.load_state_dict(m.state_dict())
    full = base.prepare(m2)
    cache = P.PrefixCache(m, base, batches=len(_batches(x)), budget_mb=64)
    run = P.Recorder(base, cache).prepare(m)
    for b in _batches(x):
        assert torch.equal(run(b), full(b))
    assert not cache.valid and "writes its parameters or buffers" in cache.why


def test_placeholders_take_no_memory_and_mark_a_missed_read():
    t = P._poison((64, 1024), torch.float32)
    assert t.isnan().all() and t.untyped_storage().nbytes() == 4
    assert P._poison((3,), torch.uint8).eq(255).all() and P._poison((3,), torch.int8).eq(-128).all()


class _DataDouble(nn.Module):
    """Doubles its input through ``.data`` (no version counter moves) and returns it (a view: rerun, never given)."""

    def forward(self, x):
        x.data.mul_(2)
        return x


@pytest.mark.parametrize("writer", ["data", "inplace_relu"])
def test_the_first_batch_is_served_from_copies_of_its_own(writer):
    """SERVE_FIRST: batch 0's outputs are copied as they are made and serve it too. A container (``block``) whose
    last child writes into its sibling's output -- through ``.data`` (no version bump: a copy shared between the
    child and the container would be stale, review q9 M1) or an in-place ReLU -- is given the output as it was at
    the container's end: every batch's logits equal a full run's, batch 0's included."""
    from collections import OrderedDict
    torch.manual_seed(11)
    last = _DataDouble() if writer == "data" else nn.ReLU(inplace=True)
    m = nn.Sequential(OrderedDict(block=nn.Sequential(OrderedDict(c1=nn.Conv2d(3, 8, 3), w=last)),
                                  c2=nn.Conv2d(8, 8, 3), pool=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(),
                                  fc=nn.Linear(8, 5))).eval()
    x, base, other = _variants(m, "c2", "amct-fake-quant")
    cache = _record(m, base, x)
    assert cache.xs[0] is not None and "block.w" in cache.writes
    assert _replayed(m, cache, other, x, first=True) == {"block"}


def test_a_first_batch_past_its_room_runs_in_full(monkeypatch):
    """Batch 0 copies every output before the plan says which to keep, up to the budget less its input. When the
    room ends before an output the plan keeps (here r2, read by c3), batch 0 is not kept: it runs in full, the
    later batch is served, the logits are the same. With room to spare it is served too; with SERVE_FIRST off,
    never."""
    from collections import OrderedDict
    torch.manual_seed(12)
    m = nn.Sequential(OrderedDict(c1=nn.Conv2d(3, 8, 3), r1=nn.ReLU(), c2=nn.Conv2d(8, 8, 3),
                                  r2=nn.ReLU(), c3=nn.Conv2d(8, 8, 3), pool=nn.AdaptiveAvgPool2d(1),
                                  flat=nn.Flatten(), fc=nn.Linear(8, 5))).eval()
    x, base, other = _variants(m, "c3", "amct-fake-quant")
    x = x[:16]                                   # two batches of 8
    # the plan (16 inputs + r2's 16 outputs + pool's and the logits) fits 70,000 bytes; batch 0's room, 70,000 less
    # its input (13,824), ends after c1's and r1's outputs (2 x 25,600), before r2's
    tight = _record(m, base, x, budget_mb=70000 / 2 ** 20)
    assert tight.valid and "r2" in tight.keep and tight.xs[0] is None and tight.xs[1] is not None
    # review q12 L1: the fallback is not silent
    assert tight.first == "batch 0 in full: its copies passed the room (0.0536 MB, prefix_mb less its input)"
    assert _replayed(m, tight, other, x, first=False) == {"c1", "r1", "c2", "r2"}
    ample = _record(m, base, x)
    assert ample.xs[0] is not None and ample.first == "batch 0 served"
    assert _replayed(m, ample, other, x, first=True) == {"c1", "r1", "c2", "r2"}
    monkeypatch.setattr(P, "SERVE_FIRST", False)
    off = _record(m, base, x)
    assert off.xs[0] is None and off.first == "batch 0 in full: SERVE_FIRST off"
    assert _replayed(m, off, other, x, first=False) == {"c1", "r1", "c2", "r2"}


class _Repeated(nn.Module):
    """One ReLU module called four times in a row: never kept (the plan keeps modules called once)."""

    def __init__(self):
        super().__init__()
        self.c1, self.act, self.c2 = nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 2, 3)
        self.fc = nn.Linear(2, 5)

    def forward(self, x):
        x = self.c1(x)
        for _ in range(4):
            x = self.act(x)
        return self.fc(self.c2(x).mean((2, 3)))


def test_a_module_called_again_costs_the_first_batch_no_room():
    """Review q12 L2: batch 0's copy of a module's first call is dropped when it is called again (the plan never
    keeps it), so its room goes to what the plan can keep. Here c1's and two act outputs (25,600 bytes each) fit the
    room, a third does not: without the drop c2's output (kept: the mean reads it) was never copied and batch 0 ran
    in full. The plan keeps c1 (act reruns on it) and c2 for a change at fc: 2 x (13,824 + 25,600 + 4,096 + ...)."""
    torch.manual_seed(13)
    m = _Repeated().eval()
    x, base, other = _variants(m, "fc", "amct-fake-quant")
    x = x[:16]                                   # two batches of 8; input 13,824 bytes each
    cache = _record(m, base, x, budget_mb=100000 / 2 ** 20)   # room: 100,000 - 13,824 = 86,176 bytes
    assert cache.calls["act"] == 4 and "act" not in cache.cacheable and "c2" in cache.keep
    assert cache.xs[0] is not None and cache.first == "batch 0 served"
    assert "c2" in _replayed(m, cache, other, x, first=True)


def test_a_kept_state_key_holds_the_storage_it_names():
    """``p.data = t`` frees the block a kept key's data pointer named, and a later tensor could get it back (a
    script doing ``p.data = randn`` twice got an equal key over other weights 19 times in 20): a kept key
    (PrefixCache.state, Scorer.run_key) would then match other weights. The key holds the tensor and its storage
    while it lives, and lets them go with it."""
    m = nn.Linear(16, 16)
    t1 = torch.randn(16, 16)
    m.weight.data = t1
    kept = P.state_key(m)
    storage = weakref.ref(t1.untyped_storage())
    del t1
    m.weight.data = torch.randn(16, 16)
    gc.collect()
    assert storage() is not None, "the kept key let its storage go: its data pointer can name other weights"
    assert P.state_key(m) != kept
    assert P.state_key(m) == P.state_key(m) and hash(P.state_key(m)) == hash(P.state_key(m))
    del kept
    gc.collect()
    assert storage() is None, "a key that is dropped must not keep its storage"


def test_a_state_key_sees_a_transposed_weight_and_is_not_pickled():
    """``p.data = p.data.t()`` on a square weight keeps its pointer, shape and dtype: the strides tell the two apart.
    A key names tensors by identity: a copy in another process would never equal it (and carry every weight)."""
    import pickle
    m = nn.Linear(8, 8)
    kept = P.state_key(m)
    m.weight.data = m.weight.data.t()
    assert P.state_key(m) != kept
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(kept)
