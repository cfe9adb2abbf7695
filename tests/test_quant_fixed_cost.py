"""Issue 37, round 4: the report's fixed cost cut without changing a result. Each shortcut against the path it
skips, value for value: IFMR's candidates searched side by side, IFMR results reused across one run's
calibrations, accuracy.layers.metrics' all-finite shortcut, per-layer rows kept per deployment and the overflow
trace's scan for the first non-finite layer. (tests/test_quant_search_speed.py compares whole reports with every
switch off and on.)"""
import copy
import sys
from pathlib import Path

import pytest
import torch

from opkit import numerics
from opkit.accuracy import layers as L
from opkit.quant import algorithms as A
from opkit.quant import calibrate as C
from opkit.quant import scoring
from opkit.quant.builder import Deploy, VariantBuilder
from opkit.accuracy.policy import load_policy
from opkit.quant.config import default_config
from opkit.quant.inputs import labelled as as_labelled

sys.path.insert(0, str(Path(__file__).parent))
from quantdata.models import inputs, labelled, with_dead_channel  # noqa: E402


def _losses_one_at_a_time(x, lows, cands, scales):
    """IFMR's losses as written before round 4: one candidate at a time, fresh tensors (the mean machine-
    independent, as algorithms._mse_losses takes it)."""
    out = []
    for low, cand, s in zip(lows, cands.tolist(), scales.tolist()):
        err = torch.round(x.clamp(low, cand) / s) * s - x
        out.append(numerics.mean(err * err))
    return out


@pytest.mark.parametrize("threads", [1, 2])
def test_ifmr_candidates_side_by_side_give_the_same_losses(threads):
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        g = torch.Generator().manual_seed(threads)
        for n in [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 100, 1000, 4095, 4097, 8192, 12288, 32769, 70000]:
            x = torch.randn(n, generator=g) * 3
            cands = torch.arange(0.7, 1.3, 0.01, dtype=torch.float32) * float(x.abs().max())
            for lows, scales in (([-4.0] * len(cands), (cands + 4) / 255), ((-cands).tolist(), cands / 127)):
                want = _losses_one_at_a_time(x, lows, cands, scales)
                assert A._mse_losses(x, lows, cands, scales) == want, n
    finally:
        torch.set_num_threads(saved)


@pytest.mark.parametrize("offset", [True, False])
def test_ifmr_result_the_same_side_by_side_and_one_at_a_time(offset, monkeypatch):
    g = torch.Generator().manual_seed(5)
    for n in (50, 3000, 9000, 40000):
        x = torch.randn(n, generator=g).relu() * 2 if offset else torch.randn(n, generator=g)
        fast = A.ifmr(x, 8, offset)
        monkeypatch.setattr(A, "IFMR_ROWS_ELEMENTS", 0)
        slow = A.ifmr(x, 8, offset)
        monkeypatch.undo()
        assert fast == slow


def test_ifmr_memo_reuses_only_the_same_bytes_and_parameters():
    memo = C.IfmrMemo()
    x = torch.randn(5000, generator=torch.Generator().manual_seed(1))
    args = (8, True, 0.999999, 0.999999, (0.7, 1.3), 0.01)
    a = memo(x, *args)
    assert memo(x.clone(), *args) is a and memo.hits == 1          # the same values: the same search, reused
    y = x.clone()
    y[1234] = torch.nextafter(y[1234], torch.tensor(10.0))          # one ulp apart: searched again
    assert memo(y, *args) == A.ifmr(y, *args) and memo.misses == 2
    assert memo(x, 8, False, *args[2:]) == A.ifmr(x, 8, False, *args[2:]) and memo.misses == 3
    assert a == A.ifmr(x, *args)


def test_recalibration_reuses_the_searches_of_unchanged_layers():
    """The same config calibrated twice in one builder: the second forward still runs, its IFMR searches are
    reused, and the records are the same as a calibration without the memo."""
    m = with_dead_channel()
    x = inputs(16, seed=2)
    b = VariantBuilder(m, x, Deploy(load_policy("cann-force-fp16")), lambda s: None)
    cfg = default_config(m)
    first = b.records(cfg)
    hits = b.ifmr.hits
    again = b.records(cfg, fresh=True)
    assert b.ifmr.hits == hits + len(cfg.quant_layers)
    plain = C.calibrate(m, x, cfg, b.graph)
    assert again == first == plain
    # a layer kept in float changes what the layers after it see: those are searched again
    f = cfg.with_float([cfg.quant_layers[0]])
    misses = b.ifmr.misses
    assert b.records(f, fresh=True) == C.calibrate(m, x, f, b.graph)
    assert b.ifmr.misses > misses


def test_metrics_all_finite_shortcut_equals_the_masked_path(monkeypatch):
    g = torch.Generator().manual_seed(3)
    cases = [(torch.randn(4, 5, 6, generator=g), torch.randn(4, 5, 6, generator=g)),
             (torch.ones(10), torch.ones(10)), (torch.zeros(7), torch.randn(7, generator=g)),
             (torch.randn(300, generator=g).half(), torch.randn(300, generator=g)),
             (torch.tensor([1.0, float("inf"), 2.0]), torch.tensor([1.0, 3.0, 2.0])),
             (torch.tensor([1.0, float("nan"), 2.0]), torch.tensor([1.0, float("nan"), 2.0]))]
    for out, ref in cases:
        fast = L.metrics(out, ref)
        monkeypatch.setattr(L, "ALL_FINITE_SHORTCUT", False)
        slow = L.metrics(out, ref)
        monkeypatch.undo()
        assert repr(fast) == repr(slow)
    huge = torch.full((4,), 1e308, dtype=torch.float64)    # a finite sum would overflow: the masked path, same answer
    assert L.metrics(huge, huge)["cosine"] == 1.0 and L.metrics(huge, huge)["nonfinite"] == 0.0


def _overflowing_scorer():
    m = with_dead_channel()
    x, y = labelled(m, 64, seed=1)
    b = VariantBuilder(m, inputs(16, seed=2), Deploy(load_policy("cann-force-fp16")), lambda s: None)
    sc = scoring.Scorer(m, as_labelled((x, y)), x[:16], scoring.Run(), lambda s: None)
    return b, sc


def test_rows_kept_per_deployment_and_the_nonfinite_scan(monkeypatch):
    b, sc = _overflowing_scorer()
    v16, v8 = b.float_variant(), b.variant(default_config(b.model), "int8")
    for v in (v16, v8):
        fast_first = sc.first_nonfinite(v)                 # the scan alone (nothing kept yet)
        rows = sc.rows(v)
        renamed = copy.copy(v)
        renamed.name = "another name"
        assert sc.rows(renamed) is rows                    # the same engine modes: kept
        monkeypatch.setattr(scoring, "REUSE_ROWS", False)
        fresh = sc.rows(v)
        slow_first = sc.first_nonfinite(v)
        monkeypatch.undo()
        assert [r.as_dict() for r in fresh] == [r.as_dict() for r in rows]
        assert fast_first == slow_first == sc.first_nonfinite(v)
    assert sc.first_nonfinite(v16) is not None             # the model overflows fp16: the scan finds it
    # a changed deployment (a layer's mode swapped) is not served the kept rows
    other = copy.copy(v8)
    other.layers = dict(v8.layers)
    other.layers.pop(next(iter(v8.quantized)))
    assert sc.run_key(other) != sc.run_key(v8)



def test_kept_rows_follow_a_changed_model(monkeypatch):
    """The kept rows are keyed on the model's tensors too: a weight edited in place (or swapped through ``.data``)
    between two queries is a new run, not the kept rows (the reviewer's reproduction, mixed_scale's fc)."""
    b, sc = _overflowing_scorer()
    v16 = b.float_variant()
    fc = next(m for m in sc.model.modules() if isinstance(m, torch.nn.Linear))
    kept = [r.as_dict() for r in sc.rows(v16)]
    with torch.no_grad():
        fc.weight.mul_(3.0)
    monkeypatch.setattr(scoring, "REUSE_ROWS", False)
    fresh = [r.as_dict() for r in sc.rows(v16)]
    monkeypatch.undo()
    assert fresh != kept                                   # the edit changes the rows: the check can fail
    assert [r.as_dict() for r in sc.rows(v16)] == fresh
    fc.weight.data = fc.weight.data / 3.0                  # no version bump: the storage differs
    assert [r.as_dict() for r in sc.rows(v16)] == kept

def test_rows_shared_by_a_deployment_equal_by_value(monkeypatch):
    """ROWS_BY_VALUE: the same config built again from a recalibration (new mode objects, every field equal) gets
    the kept rows and overflow scan without a recorded run, and they are what its own run gives; a record one ulp
    off, or the model's tensors changed, is a run of its own."""
    import dataclasses
    import math
    b, sc = _overflowing_scorer()
    cfg = default_config(b.model)
    v8 = b.variant(cfg, "int8")
    rows, scan = sc.rows(v8), sc.first_nonfinite(v8)
    ran = []
    run = sc._run_recorded
    monkeypatch.setattr(sc, "_run_recorded", lambda v: ran.append(v.name) or run(v))
    again = b.variant(cfg, "again", records=b.records(cfg, fresh=True))
    name = v8.quantized[0]
    assert again.layers[name] is not v8.layers[name] and sc.run_key(again) != sc.run_key(v8)
    assert sc.first_nonfinite(again) == scan and sc.rows(again) is rows and ran == []
    monkeypatch.setattr(scoring, "REUSE_ROWS", False)
    assert [r.as_dict() for r in sc.rows(again)] == [r.as_dict() for r in rows] and ran == ["again"]
    assert sc.first_nonfinite(again) == scan
    monkeypatch.setattr(scoring, "REUSE_ROWS", True)
    recs = dict(b.records(cfg))
    recs[name] = dataclasses.replace(recs[name], scale_d=math.nextafter(recs[name].scale_d, math.inf))
    sc.rows(b.variant(cfg, "one ulp", records=recs))
    assert ran[-1] == "one ulp"
    flt = cfg.with_float(["fc"])                 # fc runs under the policy: its weight is in no mode
    sc.rows(b.variant(flt, "fc float"))
    with torch.no_grad():
        b.model.fc.weight.mul_(1.5)
    sc.first_nonfinite(b.variant(flt, "fc edited"))
    assert ran[-1] == "fc edited"
    # the edit dropped every entry of the earlier state (each held that state's weights alive): one entry left
    assert len(sc._scans) == 1 and not sc._rows and all(k[-1] == sc._rows_state for k in sc._scans)



def test_scan_shared_by_a_deployment_equal_by_value(monkeypatch):
    """ROWS_BY_VALUE on the scan-only path: an earlier deployment only scanned for overflow (first_nonfinite, never
    rows) gives its scan to one equal by value without a recorded run; with the switch off that one is run."""
    b, sc = _overflowing_scorer()
    cfg = default_config(b.model)
    v8 = b.variant(cfg, "int8")
    scan = sc.first_nonfinite(v8)
    assert sc.run_key(v8) in sc._scans and sc.run_key(v8) not in sc._rows     # scanned, never rows
    ran = []
    run = sc._run_recorded
    monkeypatch.setattr(sc, "_run_recorded", lambda v: ran.append(v.name) or run(v))
    again = b.variant(cfg, "again", records=b.records(cfg, fresh=True))
    assert sc.run_key(again) != sc.run_key(v8)
    assert sc.first_nonfinite(again) == scan and ran == []
    monkeypatch.setattr(scoring, "ROWS_BY_VALUE", False)
    other = b.variant(cfg, "other", records=b.records(cfg, fresh=True))
    assert sc.first_nonfinite(other) == scan and ran == ["other"]

def _mutable_parts(obj, path="cfg"):
    """(path, object) for every dict / list / dataclass reachable from ``obj``."""
    import dataclasses
    if dataclasses.is_dataclass(obj):
        yield path, obj
        for f in dataclasses.fields(obj):
            yield from _mutable_parts(getattr(obj, f.name), f"{path}.{f.name}")
    elif isinstance(obj, dict):
        yield path, obj
        for k, v in obj.items():
            yield from _mutable_parts(v, f"{path}[{k!r}]")
    elif isinstance(obj, (list, tuple)):
        if isinstance(obj, list):
            yield path, obj
        for i, v in enumerate(obj):
            yield from _mutable_parts(v, f"{path}[{i}]")


def test_config_copy_is_a_deep_copy():
    """QuantConfig.copy (rebuilt by hand, not copy.deepcopy: the search copies per step) equals copy.deepcopy and
    shares no dict, list or dataclass with the original -- also for a field added later."""
    import copy as copy_mod
    from opkit.quant.config import parse_config
    m = with_dead_channel()
    cfg = default_config(m).with_dmq(0.5).with_channel_wise(False)
    cfg.skip_fusion_layers = ["conv1"]
    ada = parse_config({"conv2": {"quant_enable": True, "weight_quant_params": {
        "wts_algo": "ada_quantize", "num_iteration": 5}}}, m)
    for c in (cfg, ada):
        got, want = c.copy(), copy_mod.deepcopy(c)
        assert got == want and got.to_json() == c.to_json()
        ours = dict(_mutable_parts(c))
        theirs = dict(_mutable_parts(got))
        assert ours.keys() == theirs.keys()
        shared = [p for p in ours if ours[p] is theirs[p]]
        assert not shared, shared
