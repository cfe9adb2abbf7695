"""Issue 37: opkit quant's classic search made cheaper without changing any result. With every speed switch off (FP32
rerun beside each evaluation, the labelled set rehashed, the engine's function mode on inside every op, float32
ops through the casts, a layer's constants and plans made anew) and on, the report is the same field for field
(timings aside) and every row's class per sample is the same; and FP32 runs once per quantize() when on. The
kept Conv+BN folds, weight codes and plans follow a change of the model's tensors."""
import json
import sys
from pathlib import Path

import pytest
import torch

import opkit
from opkit.accuracy import simulate as S
from opkit.accuracy import layers as L
from opkit.quant import algorithms as A
from opkit.quant import calibrate as C
from opkit.quant import capture, fused, scoring, variant
from opkit.quant import modes as M

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import encoder as E  # noqa: E402
from quantdata.models import inputs, labelled, mixed_scale, with_dead_channel  # noqa: E402

FLAGS = ((scoring, "REUSE_FP32"), (S, "MODE_OFF_INSIDE_OPS"), (S, "F32_AS_IS"), (M, "KEEP_CONSTANTS"),
         (capture, "KEEP_FOLDS"), (variant, "KEEP_CODES"),
         # round 4, the fixed cost: rows once per deployment, the overflow scan without cosines, metrics' all-finite
         # shortcut, IFMR results reused across calibrations
         (scoring, "REUSE_ROWS"), (L, "ALL_FINITE_SHORTCUT"), (C, "REUSE_IFMR"),
         # round 5, an evaluation's own cost and IFMR's: fused kernels, IFMR's row means, the engine's bookkeeping
         (fused, "ENABLED"), (A, "IFMR_FUSED"), (A, "ROW_MEANS"), (S, "DICT_FORWARD"), (S, "SKIP_LN_PROBE"),
         (S, "LEAN_DISPATCH"), (M, "ONE_KEY"),
         # round 6, outside the evaluations: IFMR's candidate skip, built layers kept across variants
         (A, "IFMR_BOUND"), (variant, "KEEP_LAYERS"), (capture, "SHARE_CAPTURE"),
         # round 7, the evaluations: a search variant starts from the base variant's kept outputs (prefix reuse)
         (scoring, "REUSE_PREFIX"),
         # round 9, an evaluation's cost: the all-float32 policy's dispatch
         (S, "F32_POLICY_FAST"),
         # q14, outside the evaluations: rows and overflow scans shared by deployments equal by value, channel bounds
         # from the codes' kept sign sums
         (scoring, "ROWS_BY_VALUE"), (M, "SPLIT_BOUNDS"),
         # q15b, an evaluation's cost: an INT8 layer's fake-quant call with its per-layer constants kept
         (M, "LEAN_CALL"))


def _encoder():
    m = E.encoder().float().eval()
    x = E.patches(96, 1).float()
    with torch.no_grad():
        y = m(x).argmax(-1)
    return m, E.patches(16, 2).float(), (x, y), dict(policy="amct-fake-quant", target_drop=3.0)


def _mixed():
    m = mixed_scale()
    return m, inputs(32, seed=2), labelled(m, 128, seed=1), dict(target_drop=0.5, table_samples=16, greedy_width=3)


def _same(a, b):
    ad, bd = a.to_dict(), b.to_dict()
    js = lambda v: json.dumps(v, sort_keys=True, default=str)      # noqa: E731 - NaN equal to NaN
    differ = [k for k in ad if k not in ("eval_seconds", "seconds", "eval_backends") and js(ad[k]) != js(bd[k])]
    assert not differ, differ
    assert a.activations.keys() == b.activations.keys()      # the HTML's histograms: not in to_dict
    for n in a.activations:
        assert all((p == q).all() and len(p) == len(q) for p, q in zip(a.activations[n], b.activations[n])), n
    assert a.predictions.keys() == b.predictions.keys()
    for k in a.predictions:
        assert a.predictions[k] == b.predictions[k], k


def _overflowing():
    """fp16 overflow at a folded BatchNorm: the overflow trace, its fixes and the recommendation's fix all run."""
    m = with_dead_channel()
    return m, inputs(32, seed=2), labelled(m, 128, seed=1), dict(target_drop=0.5, table_samples=16, greedy_width=3)


@pytest.mark.parametrize("make", [_encoder, _mixed, _overflowing],
                         ids=["encoder-amct-fake-quant", "mixed-cann-force-fp16", "overflow-cann-force-fp16"])
def test_the_speed_switches_change_no_result(make, monkeypatch):
    model, calib, data, kw = make()
    fp32_runs = []
    orig = scoring.evaluate

    def counting(*a, **k):
        res = orig(*a, **k)
        fp32_runs.append("fp32" in res.names)
        return res
    monkeypatch.setattr(scoring, "evaluate", counting)
    reps = {}
    for on in (False, True):
        for mod, flag in FLAGS:
            monkeypatch.setattr(mod, flag, on)
        # IFMR's candidates side by side (on) or one at a time (0 elements)
        monkeypatch.setattr(A, "IFMR_ROWS_ELEMENTS", 1 << 16 if on else 0)
        M._PLANS.clear()
        M._SIGN_SUMS.clear()
        M._PLAN_OF_TENSOR.clear()
        capture._FOLDS.clear()
        variant._CODES.clear()
        variant._LAYERS.clear()
        fp32_runs.clear()
        reps[on] = opkit.quantize(model, calib, data, batch_size=64, workers=1, **kw)
        runs = sum(fp32_runs)
        # FP32 runs once, and again beside each fix that changes the model (a BatchNorm eps: not cached)
        changed = sum(1 for f in reps[on].overflow for x in f.fixes if ".eps = " in x.fix and x.top1 is not None)
        assert runs == (1 + changed if on else len(fp32_runs)) and len(fp32_runs) > 5
    assert reps[True].evals == reps[False].evals
    _same(reps[False], reps[True])
    if make is _overflowing:
        assert reps[True].overflow and reps[True].overflow[0].fixes      # the trace ran and found it


def test_kept_folds_and_codes_follow_a_changed_model():
    """A BatchNorm's statistics or a conv's weights changed in place between two builds: the second build folds and
    quantizes again (a stale fold would keep the old weights)."""
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import default_config
    from opkit.quant.graph import read_graph
    m = mixed_scale()
    x = inputs(16, seed=3)
    cfg = default_config(m)
    g = read_graph(m, (x[:2],))
    recs = calibrate(m, x, cfg, g)
    conv, bn = next(iter(g.pairs.items()))
    w1, b1, _ = capture.layer_weights(m, conv, g, cfg)
    assert capture.layer_weights(m, conv, g, cfg)[0] is w1           # kept while nothing changed
    v1 = variant.build_variant(m, cfg, recs, g)
    with torch.no_grad():
        m.get_submodule(bn).running_var.mul_(4.0)
        m.get_submodule(conv).weight.mul_(0.5)
    w2, b2, _ = capture.layer_weights(m, conv, g, cfg)
    ref_w, ref_b = M.fold_bn(m.get_submodule(conv).weight, m.get_submodule(conv).bias, m.get_submodule(bn))
    assert torch.equal(w2, ref_w) and torch.equal(b2, ref_b) and not torch.equal(w1, w2)
    v2 = variant.build_variant(m, cfg, recs, g)
    monkey = [(capture, "KEEP_FOLDS"), (variant, "KEEP_CODES"), (M, "KEEP_CONSTANTS")]
    saved = [getattr(mod, f) for mod, f in monkey]
    try:
        for mod, f in monkey:
            setattr(mod, f, False)
        fresh = variant.build_variant(m, cfg, recs, g)
    finally:
        for (mod, f), val in zip(monkey, saved):
            setattr(mod, f, val)
    q1, q2, qf = v1.layers[conv], v2.layers[conv], fresh.layers[conv]
    assert torch.equal(q2.codes, qf.codes) and not torch.equal(q1.codes, q2.codes)
    assert q2.chunk_plan() == qf.chunk_plan()


@pytest.mark.parametrize("change", ["data", "half"])
def test_kept_folds_follow_a_parameter_whose_data_was_swapped(change):
    """``p.data = t`` and ``model.half()`` keep the Parameter object and its version counter; the kept fold must
    still see the new data (its key holds the storage, dtype and shape, modes.tensor_state)."""
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import default_config
    from opkit.quant.graph import read_graph
    m = mixed_scale()
    x = inputs(16, seed=3)
    cfg = default_config(m)
    g = read_graph(m, (x[:2],))
    calibrate(m, x, cfg, g)
    conv, _ = next(iter(g.pairs.items()))
    w1 = capture.layer_weights(m, conv, g, cfg)[0]
    p = m.get_submodule(conv).weight
    if change == "data":
        p.data = p.data * 0.5
    else:
        m.half()
    assert m.get_submodule(conv).weight is p
    w2 = capture.layer_weights(m, conv, g, cfg)[0]
    assert w2 is not w1 and not torch.equal(w1, w2)
