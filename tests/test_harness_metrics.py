"""Metrics, the adopted standard, the cancellation rule, and verdicts on plain-torch stand-in ops."""
import math

import pytest
import torch

from harness_standins import REFERENCE, layer_norm_fp32_compute, layer_norm_naive, write_op
from opkit.harness.cases import build_matrix, make_inputs
from opkit.harness.execute import OpHandle, run_case
from opkit.harness.golden import error_scale, golden, load_reference
from opkit.harness.metrics import compare
from opkit.opspec.standard import thresholds
from opkit.opspec import load_spec


def test_thresholds_per_dtype_and_overrides():
    assert thresholds("float16").threshold == 2 ** -10
    assert thresholds("bfloat16").threshold == 2 ** -7
    assert thresholds("float32").threshold == 2 ** -13
    assert thresholds("int64").standard == "bit_exact"
    t = thresholds("bfloat16", overrides={"bfloat16": {"threshold": 0.01}})
    assert t.threshold == 0.01 and t.overridden == ("threshold",)
    assert thresholds("float16", overrides={"bfloat16": {"threshold": 0.01}}).overridden == ()
    with pytest.raises(ValueError, match="unknown key"):
        thresholds("float16", overrides={"float16": {"rtol": 1}})


def _gold(shape=(64, 1000), seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64)


def test_exact_and_rounded_outputs_pass():
    gold = _gold()
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        name = str(dt).split(".")[1]
        r = compare(gold.to(dt), gold, thresholds(name))
        assert r["passed"], r["reason"]
        assert r["cosine"] > 0.9999 and r["mere"] < thresholds(name).threshold


@pytest.mark.parametrize("dtype,scale,fails", [
    ("float16", 1.002, True), ("float32", 1.002, True), ("bfloat16", 1.002, False),
    ("bfloat16", 1.02, True), ("float16", 1.02, True)])
def test_scaled_golden_sensitivity(dtype, scale, fails):
    gold = _gold()
    out = gold.to(getattr(torch, dtype))
    r = compare(out, gold * scale, thresholds(dtype))
    assert r["passed"] is not fails, r


def test_nan_inf_positions_and_signs_must_match():
    gold = _gold((8, 16))
    gold[0, 0] = float("nan")
    gold[1, 1] = float("inf")
    out = gold.clone().float()
    assert compare(out, gold, thresholds("float32"))["passed"]
    bad = out.clone()
    bad[1, 1] = float("-inf")
    r = compare(bad, gold, thresholds("float32"))
    assert not r["passed"] and "NaN/Inf mismatch" in r["reason"] and "[1, 1]" in r["reason"]
    bad = out.clone()
    bad[0, 0] = 0.0
    assert not compare(bad, gold, thresholds("float32"))["passed"]
    bad = out.clone()
    bad[2, 2] = float("nan")
    assert not compare(bad, gold, thresholds("float32"))["passed"]


def test_golden_beyond_output_range_must_be_inf():
    gold = torch.tensor([70000.0, -1e6, 1.0], dtype=torch.float64)
    out = torch.tensor([float("inf"), float("-inf"), 1.0], dtype=torch.float16)
    assert compare(out, gold, thresholds("float16"))["passed"]
    out2 = torch.tensor([65504.0, float("-inf"), 1.0], dtype=torch.float16)
    assert not compare(out2, gold, thresholds("float16"))["passed"]


def test_small_value_domain_is_judged_on_absolute_error():
    gold = torch.full((100,), 1.0, dtype=torch.float64)
    gold[:10] = 1e-5                      # below S = 2^-10 for fp16
    out = gold.clone()
    out[:10] = 1e-5 + 1e-5                # 100 % relative error but |err| = 1e-5 <= 2^-16
    r = compare(out.to(torch.float16), gold, thresholds("float16"))
    assert r["passed"] and r["small"] == 10, r
    out[:10] = 1e-5 + 1e-4                # |err| > 2^-16
    r = compare(out.to(torch.float16), gold, thresholds("float16"))
    assert not r["passed"] and "small-value" in r["reason"]


def test_bit_exact_for_integer_outputs():
    gold = torch.arange(10)
    assert compare(gold.clone(), gold, thresholds("int64"))["passed"]
    bad = gold.clone()
    bad[3] = 4
    r = compare(bad, gold, thresholds("int64"))
    assert not r["passed"] and "[3]" in r["reason"]


def test_cancellation_rule_needed_and_principled():
    """y = a + b with |a|, |b| ~ 1 cancelling: a correct FP32 computation fails a pure relative rule at the
    cancelled elements, passes with the error scale |a| + |b|, and a wrong one still fails."""
    g = torch.Generator().manual_seed(1)
    a = torch.randn(100000, generator=g, dtype=torch.float64)
    b = -a + torch.randn(100000, generator=g, dtype=torch.float64) * 1e-4   # heavy cancellation
    gold = a + b
    out = (a.float() + b.float())                                          # correct FP32 compute
    thr = thresholds("float32")
    assert not compare(out, gold, thr)["passed"]                           # relative rule alone
    r = compare(out, gold, thr, scale=a.abs() + b.abs())
    assert r["passed"] and r["cancelled"] > 0.5 * gold.numel(), r
    wrong = out + 1e-3 * (a.abs() + b.abs()).float()                       # error 1e-3 of the terms
    r = compare(wrong, gold, thr, scale=a.abs() + b.abs())
    assert not r["passed"]


@pytest.fixture(scope="module")
def ln(tmp_path_factory):
    d = write_op(tmp_path_factory.mktemp("ws"))
    return load_spec(d), load_reference(d / "reference.py")


def _cases(spec, ids):
    byid = {c.id: c for c in build_matrix(spec, "default")}
    return [byid[i] for i in ids]


def test_estimated_error_scale_matches_the_layer_norm_terms(ln):
    spec, ref = ln
    case = _cases(spec, ["fp32-64x1000-offset1000"])[0]
    x, w, b = make_inputs(spec, case)
    s = error_scale(ref, [x, w, b], case.attrs, golden(ref, [x, w, b], case.attrs))[0]
    x64, w64, b64 = x.double(), w.double(), b.double()
    rstd = torch.rsqrt(x64.var(-1, unbiased=False, keepdim=True) + 1e-5)
    terms = x64.abs() * rstd * w64.abs() + b64.abs()      # the x_i term dominates at offset 1000
    ratio = s / terms
    assert 0.5 < float(ratio.median()) < 2.0


FP32_IDS = ["fp16-64x1000-normal", "fp16-64x1000-scale50", "fp16-64x1000-offset200", "fp16-37x1001-special",
            "bf16-64x1000-scale1e6", "bf16-64x1000-offset200", "fp32-64x1000-normal", "fp32-64x1000-offset1000",
            "fp32-64x1000-scale50", "fp32-37x1001-tiny", "fp32-37x1001-mixed", "fp16-37x1001-tiny"]


def test_fp32_compute_stand_in_passes(ln):
    spec, ref = ln
    for case in _cases(spec, FP32_IDS):
        rec = run_case(spec, case, OpHandle(layer_norm_fp32_compute, layer_norm_naive), ref)
        assert rec["verdict"] == "pass", (case.id, rec["reason"])
        assert rec["metrics"]["cosine"] > 0.9999, case.id                # inputs finite: cosine is defined


def test_fp16_compute_stand_in_fails_where_amp_loses(ln):
    spec, ref = ln
    # DESIGN.md: fp16 LayerNorm is fine-ish on N(0,1) but breaks on N(0,1)*50 and N(0,1)+200.
    for cid in ("fp16-64x1000-scale50", "fp16-64x1000-offset200", "fp16-64x1000-scale1e4"):
        (case,) = _cases(spec, [cid])
        rec = run_case(spec, case, OpHandle(layer_norm_naive), ref)
        assert rec["verdict"] == "fail", cid
        assert rec["reason"]
    (case,) = _cases(spec, ["fp16-64x1000-scale50"])
    rec = run_case(spec, case, OpHandle(layer_norm_fp32_compute, layer_norm_naive), ref)
    assert rec["verdict"] == "pass"
    assert rec["naive_metrics"]["passed"] is False          # side by side: opkit passes, naive AMP fails


@pytest.mark.parametrize("factor,failing", [(1.002, {"float16", "float32"}),
                                            (1.02, {"float16", "bfloat16", "float32"})])
def test_off_golden_fails_the_right_dtypes(tmp_path, factor, failing):
    d = write_op(tmp_path, reference=REFERENCE.replace("return F.layer_norm", f"return {factor} * F.layer_norm"))
    spec, ref = load_spec(d), load_reference(d / "reference.py")
    ids = ["fp16-64x1000-normal", "bf16-64x1000-normal", "fp32-64x1000-normal"]
    got = set()
    for case in _cases(spec, ids):
        if run_case(spec, case, OpHandle(layer_norm_fp32_compute), ref)["verdict"] == "fail":
            got.add(case.dtype)
    assert got == failing


def test_op_exceptions_fail_the_case_with_the_emulator_rule(ln):
    spec, ref = ln
    (case,) = _cases(spec, ["fp16-64x1000-normal"])

    def broken(*a, **k):
        raise RuntimeError("opkit emulator: [ub-capacity] TPipe::InitBuffer at /w/kernel.cpp:42 (block 3): "
                           "asked 200000 bytes, 188160 left\nException raised from ...")
    rec = run_case(spec, case, OpHandle(broken), ref)
    assert rec["verdict"] == "fail"
    assert rec["reason"].startswith("emulator rule [ub-capacity] broken by TPipe::InitBuffer at /w/kernel.cpp:42")
    rec = run_case(spec, case, OpHandle(lambda *a, **k: a[0][:, :-1]), ref)
    assert rec["verdict"] == "fail" and "shape" in rec["reason"]
    rec = run_case(spec, case, OpHandle(lambda x, w, b, eps: layer_norm_fp32_compute(x, w, b, eps).float()), ref)
    assert rec["verdict"] == "fail" and "dtype float32, expected float16" in rec["reason"]


def test_report_record_fields(ln):
    spec, ref = ln
    (case,) = _cases(spec, ["fp16-37x1001-offset200"])
    rec = run_case(spec, case, OpHandle(layer_norm_fp32_compute, layer_norm_naive), ref)
    for k in ("op", "dtype", "shapes", "distribution", "seed", "verdict", "reason", "metrics", "naive_metrics"):
        assert k in rec
    for k in ("max_abs_err", "max_rel_err", "mere", "mare", "rmse", "cosine", "thousandth", "five_thousandth",
              "assert_close", "cancelled"):
        assert k in rec["metrics"]
        assert k in rec["naive_metrics"]
    assert math.isfinite(rec["metrics"]["mere"])


def test_cancelled_elements_near_zero_keep_the_absolute_floor():
    """A golden of exactly 0 with a tiny error scale (e.g. gelu's backward deep in the negative tail) is
    judged by max(cancellation bound, A): a correctly rounded FP32 result of 6.7e-33 passes, 1e-6 fails."""
    gold = torch.tensor([0.0, 1.0, -2.0], dtype=torch.float64)
    scale = torch.tensor([1e-40, 1.0, 2.0], dtype=torch.float64)
    thr = thresholds("float32")
    ok = torch.tensor([6.7e-33, 1.0, -2.0], dtype=torch.float32)
    r = compare(ok, gold, thr, scale=scale)
    assert r["passed"], r
    bad = torch.tensor([1e-6, 1.0, -2.0], dtype=torch.float32)
    r = compare(bad, gold, thr, scale=scale)
    assert not r["passed"] and "cancelled" in r["reason"], r


def test_metric_registry_feeds_compare_report_and_docs(tmp_path):
    """One list of metrics: compare() reports every one, the HTML report's columns and docs/harness.md's
    table come from it."""
    from pathlib import Path

    from opkit.harness import report
    from opkit.harness.metrics import METRICS, markdown

    g = torch.linspace(-3, 3, 64, dtype=torch.float64)
    res = compare(g.to(torch.float16), g, thresholds("float16"))
    assert [m.key for m in METRICS if m.key not in res] == []
    docs = (Path(__file__).resolve().parents[1] / "docs" / "harness.md").read_text()
    assert markdown() in docs, "docs/harness.md's metric table differs from metrics.METRICS: paste markdown()"
    html = report.write_html(report.assemble([{"op": "x", "id": "a", "dtype": "float16", "shapes": {"x": [64]},
                                               "verdict": "pass", "metrics": res}], [], mode="default", seed=0,
                                             seconds=0.0), tmp_path / "r.html")
    for m in METRICS:
        if m.label:
            assert f"<th class=l>{m.label}</th>" in html.read_text()
