"""Issue 37, round 6: the work outside the evaluations cut without changing a result -- built INT8 layers kept
across a search's variants (variant.KEEP_LAYERS). Each against the path it skips, value for value.
(tests/test_quant_search_speed.py and the benchmark compare whole reports with every switch off and on.)"""
import sys
from pathlib import Path

import pytest
import torch

from opkit.accuracy.policy import load_policy
from opkit.quant import variant as V
from opkit.quant.builder import Deploy, VariantBuilder
from opkit.quant.config import default_config
from opkit.quant.modes import QuantLayer

sys.path.insert(0, str(Path(__file__).parent))
from quantdata.models import inputs, with_dead_channel  # noqa: E402


@pytest.fixture
def hits(monkeypatch):
    """Kept layers handed out (the kept path taken): a test of KEEP_LAYERS that never took it shows nothing."""
    got = []
    real = V._kept_layer

    def counting(w, key):
        layer = real(w, key)
        got.append(layer is not None)
        return layer
    monkeypatch.setattr(V, "_kept_layer", counting)
    return got


def _builder():
    m = with_dead_channel()
    return m, VariantBuilder(m, inputs(16, seed=2), Deploy(load_policy("cann-force-fp16")), lambda s: None)


def _state(v):
    """Every field of every QuantLayer of ``v`` (tensors as their values) and the variant's notes."""
    out = {}
    for n, m in v.layers.items():
        if isinstance(m, QuantLayer):
            out[n] = {k: (val.tolist() if isinstance(val, torch.Tensor) else val) for k, val in vars(m).items()
                      if not k.startswith("_")}
    return out, list(v.notes)


def _out(v, model, x):
    y, _ = v.simulator().run(model, (x,), record=False)
    return y


def test_kept_layers_equal_fresh_builds_and_are_not_shared(monkeypatch, hits):
    m, b = _builder()
    cfg = default_config(m)
    x = inputs(8, seed=3)
    v1, v2 = b.variant(cfg, "a"), b.variant(cfg.copy(), "b")
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    fresh = b.variant(cfg, "c")
    monkeypatch.undo()
    assert _state(v1) == _state(v2) == _state(fresh)
    assert torch.equal(_out(v2, m, x), _out(fresh, m, x))
    for n in v1.quantized:        # each variant its own object: add_requant and a run write to it
        assert v1.layers[n] is not v2.layers[n] and v1.layers[n].overflow is not v2.layers[n].overflow
    # one layer in float: its neighbour's requant link differs, and must not leak from the kept copy
    first = v1.quantized[0]
    v3 = b.variant(cfg.with_float([first]), "d")
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    fresh3 = b.variant(cfg.with_float([first]), "e")
    monkeypatch.undo()
    assert _state(v3) == _state(fresh3)
    assert torch.equal(_out(v3, m, x), _out(fresh3, m, x))
    assert sum(hits) >= len(v1.quantized)          # v2's layers (at least) came from the kept ones


def test_kept_layers_follow_a_changed_model(monkeypatch, hits):
    """A weight edited in place (or swapped through ``.data``) between two builds gives the layer of the edited
    weight, not the kept one."""
    m, b = _builder()
    cfg = default_config(m)
    recs = b.records(cfg)
    before = _state(b.variant(cfg, "a", records=recs))
    assert _state(b.variant(cfg, "a2", records=recs)) == before and any(hits)     # kept while nothing changed
    conv = next(mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d))
    with torch.no_grad():
        conv.weight.mul_(0.5)
    edited = _state(b.variant(cfg, "b", records=recs))
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    want = _state(b.variant(cfg, "c", records=recs))
    monkeypatch.undo()
    assert edited == want and edited != before          # the edit changes the codes: the check can fail
    conv.weight.data = conv.weight.data * 3.0           # no version bump: the storage differs
    swapped = _state(b.variant(cfg, "d", records=recs))
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    want = _state(b.variant(cfg, "e", records=recs))
    monkeypatch.undo()
    assert swapped == want and swapped != edited and swapped != before


def test_kept_layers_follow_a_changed_record(monkeypatch, hits):
    m, b = _builder()
    cfg = default_config(m)
    recs = dict(b.records(cfg))
    before = _state(b.variant(cfg, "a", records=recs))
    assert _state(b.variant(cfg, "a2", records=recs)) == before and any(hits)
    name = next(iter(recs))
    import dataclasses
    recs[name] = dataclasses.replace(recs[name], scale_d=recs[name].scale_d * 2)
    got = _state(b.variant(cfg, "b", records=recs))
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    want = _state(b.variant(cfg, "c", records=recs))
    assert got == want and got != before


def _unfolded_dmq(m, b):
    """The default config with every Conv+BN left unfolded (the layer's weight is the module's own) and DMQ on."""
    from opkit.quant.layer_algorithms import by_name
    cfg = default_config(m)
    cfg.do_fusion = False
    return by_name("dmq").enable(cfg)


def test_kept_layers_see_a_write_that_bumps_no_version(monkeypatch, hits):
    """``p.data.mul_()`` and a NumPy view write keep the version and the storage: the key's content digest
    sees them. A DMQ layer without a fold makes its codes from the module's weight anew on every build (no kept
    codes between), so a kept layer would be the stale one."""
    m, b = _builder()
    cfg = _unfolded_dmq(m, b)
    recs = b.records(cfg)
    assert cfg.dmq_layers
    v = b.variant(cfg, "a", records=recs)
    assert any(v.layers[n].in_scale is not None and not v.layers[n].folded_bn for n in cfg.dmq_layers)
    before = _state(v)
    assert _state(b.variant(cfg, "a2", records=recs)) == before and any(hits)
    conv = m.get_submodule(next(n for n in cfg.dmq_layers if v.layers[n].in_scale is not None))
    version = conv.weight._version
    conv.weight.data.mul_(3.0)
    conv.weight.detach().numpy()[0] *= 0.5
    assert conv.weight._version == version                   # nothing a version-only key could see
    hits.clear()
    edited = _state(b.variant(cfg, "b", records=recs))
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    want = _state(b.variant(cfg, "c", records=recs))
    monkeypatch.undo()
    assert edited == want and edited != before


def test_kept_layers_are_no_staler_than_a_fresh_build_without_dmq(monkeypatch, hits):
    """The documented limit, pinned: without DMQ an untracked write is missed by the kept codes (variant.KEEP_CODES,
    keyed on versions) whether or not the layer is kept -- KEEP_LAYERS (no digest there) adds no staleness."""
    m, b = _builder()
    cfg = default_config(m)
    cfg.do_fusion = False
    recs = b.records(cfg)
    b.variant(cfg, "a", records=recs)
    next(mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d)).weight.data.mul_(3.0)
    kept = _state(b.variant(cfg, "b", records=recs))
    assert any(hits)
    monkeypatch.setattr(V, "KEEP_LAYERS", False)
    assert _state(b.variant(cfg, "c", records=recs)) == kept


def test_a_kept_layer_carries_the_name_it_is_built_under():
    """One module reached under two qualified names (the model, and a wrapper around it): with no fold the weight
    tensor is shared, the records equal; each variant's layer must carry its own name (the engine's layer= and
    the overflow messages)."""
    m, b = _builder()
    cfg = _unfolded_dmq(m, b)
    v1 = b.variant(cfg, "a")
    wrapped = torch.nn.Sequential(m)
    wb = VariantBuilder(wrapped, b.calib, Deploy(load_policy("cann-force-fp16")), lambda s: None)
    wcfg = _unfolded_dmq(wrapped, wb)
    v2 = wb.variant(wcfg, "b")
    assert v1.quantized and [f"0.{n}" for n in v1.quantized] == v2.quantized
    for v in (v1, v2):
        assert all(v.layers[n].name == n for n in v.quantized)


def _report_parts():
    from opkit.quant.report import plot_layers
    from opkit.quant.run import _base
    from opkit.quant.search import sensitivity
    m, b = _builder()
    base = _base(b, None, [])
    calib = b.calib
    first: list = []
    sens = sensitivity(m, [calib[:8], calib[8:16]], base.config, base.records, b.graph, first=first,
                       plotted=plot_layers(base.config, base.variant))
    return m, b, base, calib, first[0], sens


def _hist_equal(a, b):
    assert a.keys() == b.keys() and a
    for n in a:
        assert all(torch.equal(torch.as_tensor(p), torch.as_tensor(q)) for p, q in zip(a[n], b[n])), n


def test_histograms_from_sensitivity_capture_equal_their_own_run(monkeypatch):
    """The report's activation histograms from sensitivity's first batch equal those of their own capture run, and
    sensitivity's answer is the same with and without handing the capture on."""
    from opkit.quant.report import activation_histograms
    from opkit.quant.search import sensitivity
    from opkit.quant import capture as CP
    m, b, base, calib, first, sens = _report_parts()
    ran = []
    real = CP.capture_modes
    monkeypatch.setattr(CP, "capture_modes", lambda *a, **k: ran.append(1) or real(*a, **k))
    shared = activation_histograms(m, b.graph, base, calib[:8], captured=first)
    assert not ran                                           # served: no capture run
    own = activation_histograms(m, b.graph, base, calib[:8])
    assert ran
    _hist_equal(shared, own)
    assert sensitivity(m, [calib[:8], calib[8:16]], base.config, base.records, b.graph) == sens


def test_capture_not_served_for_another_graph_batch_or_model():
    m, b, base, calib, first, _ = _report_parts()
    names = list(first.names)
    assert first.serves(m, b.graph, base.config, names, calib[0:8]) is not None        # another view of it
    assert first.serves(m, b.graph, base.config, names, calib[:8].clone()) is None     # equal values elsewhere
    assert first.serves(m, b.graph, base.config, names, calib[8:16]) is None           # another batch
    assert first.serves(m, b.graph, base.config, names, calib[:7]) is None
    assert first.serves(m, b.graph, base.config, names[:-1], calib[:8]) is None        # another set of layers
    assert first.serves(m, b.graph, base.config.copy(), names, calib[:8]) is None      # another config object
    base.config.do_fusion = not base.config.do_fusion                                 # the config edited
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is None
    base.config.do_fusion = not base.config.do_fusion
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is not None
    conv = next(mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d))
    with torch.no_grad():
        conv.weight.mul_(1.0)                   # a version bump of a model tensor, the batch untouched
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is None


def test_capture_not_served_after_a_model_swap_or_a_batch_write():
    """Each check of FirstCapture alone: a fresh capture, served right before each change, not right after (and
    again once a change is undone): a storage swap, the training flag, a norm's eps, a forward hook, a batch
    write."""
    m, b, base, calib, first, _ = _report_parts()
    names = list(first.names)
    conv = next(mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d))
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is not None
    conv.weight.data = conv.weight.data.clone()     # the model's storage swapped, no version bump
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is None
    for change, undo in ((lambda: m.train(), lambda: m.eval()),
                         (lambda: setattr(bn, "eps", bn.eps * 2), lambda: setattr(bn, "eps", bn.eps / 2)),
                         (lambda: hooks.append(conv.register_forward_hook(lambda *a: None)),
                          lambda: hooks.pop().remove())):
        m, b, base, calib, first, _ = _report_parts()
        conv = next(mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d))
        bn = next(mod for mod in m.modules() if isinstance(mod, torch.nn.BatchNorm2d))
        hooks = []
        change()
        assert first.serves(m, b.graph, base.config, names, calib[:8]) is None
        undo()
        assert first.serves(m, b.graph, base.config, names, calib[:8]) is not None
    m, b, base, calib, first, _ = _report_parts()
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is not None
    calib[0, 0, 0, 0] += 0.0                    # a write to the batch, the model untouched
    assert first.serves(m, b.graph, base.config, names, calib[:8]) is None


def _quantize_counting_captures(monkeypatch, calib, **kw):
    """opkit.quantize() on a small model, search off; returns (report, FirstCaptures built)."""
    import opkit
    from opkit.quant import capture as CP
    from quantdata.models import labelled
    built = []
    real = CP.FirstCapture.__init__
    monkeypatch.setattr(CP.FirstCapture, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    m = with_dead_channel()
    rep = opkit.quantize(m, calib, labelled(m, 32, seed=1), batch_size=8, workers=1, search=False,
                         table_samples=8, **kw)
    return rep, built


def test_quantize_takes_an_inference_mode_batch(monkeypatch):
    """A calibration tensor made under torch.inference_mode() has no version counter: the capture is not shared
    (nothing can prove the batch unchanged), the report is the same as from an ordinary tensor."""
    with torch.inference_mode():
        calib = inputs(16, seed=2)
    assert calib.is_inference()
    rep, built = _quantize_counting_captures(monkeypatch, calib)
    assert not built and rep.activations
    rep2, built2 = _quantize_counting_captures(monkeypatch, inputs(16, seed=2))
    assert built2                                  # an ordinary batch: shared (the model has <= MAX_PLOTS layers)
    assert {n: [list(a) for a in v] for n, v in rep.activations.items()} == \
        {n: [list(a) for a in v] for n, v in rep2.activations.items()}


def test_no_capture_kept_when_sharing_is_off_or_cannot_serve(monkeypatch):
    from opkit.quant import capture as CP
    from opkit.quant import report as R
    monkeypatch.setattr(CP, "SHARE_CAPTURE", False)
    assert not _quantize_counting_captures(monkeypatch, inputs(16, seed=2))[1]
    monkeypatch.setattr(CP, "SHARE_CAPTURE", True)
    monkeypatch.setattr(R, "MAX_PLOTS", 1)        # the report plots fewer layers than sensitivity captures
    assert not _quantize_counting_captures(monkeypatch, inputs(16, seed=2))[1]
