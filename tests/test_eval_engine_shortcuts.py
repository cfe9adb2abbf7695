"""The engine's shortcuts for speed (issue 37: opkit quant's search within its budget), each against the path it
skips, bit for bit: the function mode taken off inside a module run as one op (MODE_OFF_INSIDE_OPS), a float32 op
on float32 tensors called as it is (F32_AS_IS), a quantized layer's constants kept (modes.KEEP_CONSTANTS), the
atomic-module walk (``inside``); and ``evaluate(reference=False)`` / ``described``, which opkit quant's Scorer
uses to stop rerunning FP32 and rehashing the labelled set on every evaluation."""
import sys
from pathlib import Path

import pytest
import torch

from opkit.accuracy import simulate as S
from opkit.data import TensorSet
from opkit.errors import OpkitError
from opkit.evaluate import FP32, SimVariant, evaluate
from opkit.quant import algorithms as A
from opkit.quant import fused
from opkit.quant import modes as M
from opkit.quant.amct import zoo
from opkit.quant.calibrate import calibrate
from opkit.quant.config import default_config
from opkit.quant.graph import read_graph
from opkit.quant.variant import build_variant

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import encoder as E  # noqa: E402

FLAGS = ((S, "MODE_OFF_INSIDE_OPS"), (S, "F32_AS_IS"), (M, "KEEP_CONSTANTS"), (S, "DICT_FORWARD"),
         (fused, "ENABLED"), (A, "IFMR_FUSED"), (A, "ROW_MEANS"), (S, "SKIP_LN_PROBE"), (S, "LEAN_DISPATCH"), (M, "ONE_KEY"),
         (S, "F32_POLICY_FAST"), (M, "LEAN_CALL"))


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().float().contiguous().view(torch.int32)


def _nets():
    enc = E.encoder().float().eval()
    yield "encoder", enc, E.patches(16, 2).float(), E.patches(24, 1).float()
    for name in ("resnet_basic", "vit", "convnext", "lstm"):
        yield f"zoo-{name}", zoo.load(name), zoo.calib_set(16), zoo.test_set(24)[0]


NETS = list(_nets())


def _run(sim, model, x):
    out, recs = sim.run(model, (x,))
    out2, _ = sim.run(model, (x,), record=False)
    return out, out2, recs, (dict(sim.kernels), dict(sim.seen), dict(sim.lowered), list(sim.notes))


@pytest.mark.parametrize("policy", ["amct-fake-quant", "cann-force-fp16", "torch-npu-autocast", None])
@pytest.mark.parametrize("net", NETS, ids=[n[0] for n in NETS])
def test_shortcuts_change_no_bit_no_record_no_count(net, policy, monkeypatch):
    name, model, calib, x = net
    cfg = default_config(model)
    graph = read_graph(model, (calib[:2],))
    v = build_variant(model, cfg, calibrate(model, calib, cfg, graph), graph)
    sims = {}
    for on in (False, True):
        for mod, flag in FLAGS:
            monkeypatch.setattr(mod, flag, on)
        int8 = SimVariant("int8", policy=policy, layers=v.layers).simulator() if policy else None
        plain = SimVariant("p", policy=policy).simulator()
        sims[on] = [_run(s, model, x) for s in (plain, int8) if s is not None]
    for (o0, o0b, r0, c0), (o1, o1b, r1, c1) in zip(sims[False], sims[True]):
        for o in (o0b, o1, o1b):
            assert torch.equal(bits(o0), bits(o)), name
        assert [(r.name, r.io_dtype, r.compute_dtype, r.kernel) for r in r0] == \
            [(r.name, r.io_dtype, r.compute_dtype, r.kernel) for r in r1]
        for a, b in zip(r0, r1):
            assert torch.equal(bits(a.tensor), bits(b.tensor)), f"{name}: {a.name}"
        assert c0 == c1                      # kernels, seen, lowered counters and notes as before


def test_the_shortcuts_are_taken(monkeypatch):
    """The mode is off inside an atomic module (no Python dispatch seen there), and a float32 op skips the casts."""
    model = E.encoder().float().eval()
    x = E.patches(8, 1).float()
    depth_calls = []
    orig = S._PolicyMode.__torch_function__

    def spy(self, func, types, args=(), kwargs=None):
        depth_calls.append(self.sim.depth)
        return orig(self, func, types, args, kwargs)
    monkeypatch.setattr(S._PolicyMode, "__torch_function__", spy)
    casts = []
    orig_cast = S._cast
    monkeypatch.setattr(S, "_cast", lambda *a, **k: casts.append(1) or orig_cast(*a, **k))
    sim = SimVariant("fq", policy="amct-fake-quant").simulator()
    for on in (False, True):
        depth_calls.clear()
        casts.clear()
        monkeypatch.setattr(S, "MODE_OFF_INSIDE_OPS", on)
        monkeypatch.setattr(S, "F32_AS_IS", on)
        sim.run(model, (x,), record=False)
        inner, n_casts = sum(1 for d in depth_calls if d > 0), len(casts)
        if on:
            assert inner == 0 and n_casts == 0
        else:
            assert inner > 0 and n_casts > 0


@pytest.mark.parametrize("dict_forward", [False, True])
def test_forwards_swapped_and_restored(dict_forward, monkeypatch):
    """The engine's wrappers are in place during a run and gone after it; a module's own instance forward (a
    user's patch) is put back, the same object -- through the instance dict or nn.Module's setattr alike."""
    monkeypatch.setattr(S, "DICT_FORWARD", dict_forward)
    model = E.encoder().float().eval()
    own = model.blocks[0].fc1.forward
    model.blocks[0].fc1.forward = own                    # an instance forward, as a user's patch would be
    seen = []
    model.head.register_forward_pre_hook(lambda m, a: seen.append("forward" in m.__dict__))
    SimVariant("fq", policy="amct-fake-quant").simulator().run(model, (E.patches(4, 1).float(),), record=False)
    assert seen == [True]
    assert "forward" not in model.head.__dict__ and model.blocks[0].fc1.__dict__["forward"] is own
    assert all("forward" not in m.__dict__ for n, m in model.named_modules() if n != "blocks.0.fc1")


def test_a_module_with_its_own_setattr_gets_it_called(monkeypatch):
    """A class with its own __setattr__ (a ScriptModule has one) gets its forward swapped through it, not the
    instance dict."""
    calls = []

    class Own(torch.nn.Linear):
        def __setattr__(self, name, value):
            calls.append(name)
            super().__setattr__(name, value)

    model = torch.nn.Sequential(Own(4, 3), torch.nn.ReLU()).eval()
    calls.clear()
    x = torch.randn(2, 4)
    out, _ = SimVariant("fq", policy="amct-fake-quant").simulator().run(model, (x,), record=False)
    assert calls == ["forward"] and "forward" not in model[0].__dict__     # set through it; deleted after
    with torch.no_grad():
        assert torch.equal(out, model(x))                # float32 everywhere: the model's own output


def test_inside_is_the_dotted_prefix_rule():
    names = ["", "a", "a.b", "a.bc", "a.b.c", "ab.c", "x.y.z", "x.y"]
    for atomic in ({"a.b"}, {"a"}, {""}, {"x.y", "a.bc"}, set()):
        for n in names:
            old = any(n.startswith(a + ".") for a in atomic) or bool(n and "" in atomic)
            assert S.inside(n, atomic) == old, (n, atomic)


def test_evaluate_without_the_reference_runs_only_the_variants():
    model = E.encoder().float().eval()
    x = E.patches(40, 1).float()
    with torch.no_grad():
        y = model(x).argmax(-1)
    ds = TensorSet(x, y)
    fq = SimVariant("fq", policy="cann-force-fp16", naive=False)
    full = evaluate(model, ds, [fq], batch_size=16, workers=1)
    described = ds.describe
    ds.describe = lambda: pytest.fail("described= given: the set is not described again")
    alone = evaluate(model, ds, [fq], batch_size=16, workers=1, reference=False, described=full.data)
    ds.describe = described
    assert full.names == ["fp32", "fq"] and alone.names == ["fq"]
    assert (alone.predictions["fq"] == full.predictions["fq"]).all()
    assert alone.data == full.data == ds.describe()
    with pytest.raises(OpkitError, match="no variant to run"):
        evaluate(model, ds, [], workers=1, reference=False)
    assert evaluate(model, ds, [FP32], workers=1, reference=False).names == ["fp32"]
