"""Baseline gates (opkit/accuracy/baseline.py) on synthetic harness reports and diagnose reports."""
import copy
import json

import pytest

from opkit.accuracy import baseline as B
from opkit.errors import OpkitError


def _case(op, cid, verdict="pass", mere=1e-4, mare=5e-4, max_rel=6e-4):
    return {"op": op, "id": cid, "verdict": verdict,
            "outputs": [{"name": "y", "metrics": {"mere": mere, "mare": mare, "max_rel_err": max_rel}}]}


def _report(cases, mode="quick", seed=0):
    return {"mode": mode, "seed": seed, "cases": cases,
            "opcheck": [{"op": "ln", "kind": "opcheck", "dtype": "float16", "verdict": "pass"}]}


def test_identical_rerun_passes_and_growth_or_new_failure_fails(tmp_path):
    f = tmp_path / "base.json"
    base = _report([_case("ln", "fp16-4x8-normal"), _case("ln", "fp32-4x8-normal", mere=0.0, mare=0.0)])
    B.update_test(f, base, {"ln": 2.0})
    assert B.check_test(f, copy.deepcopy(base), {"ln": 2.0}) == ([], [])
    # 1.9x: inside the tolerance
    ok = _report([_case("ln", "fp16-4x8-normal", mere=1.9e-4), _case("ln", "fp32-4x8-normal", mere=0.0, mare=0.0)])
    assert B.check_test(f, ok, {"ln": 2.0})[0] == []
    # 2.1x MERE, and a zero that became non-zero
    bad = _report([_case("ln", "fp16-4x8-normal", mere=2.1e-4), _case("ln", "fp32-4x8-normal", mere=1e-6, mare=0.0)])
    fails, _ = B.check_test(f, bad, {"ln": 2.0})
    assert len(fails) == 2 and fails[0].startswith("ln[fp16-4x8-normal]: grew beyond 2x") and "mere" in fails[0]
    # op.yaml tolerance 3x lets 2.1x through
    assert len(B.check_test(f, bad, {"ln": 3.0})[0]) == 1
    # a case that passed and now fails
    failing = _report([_case("ln", "fp16-4x8-normal", verdict="fail"),
                       _case("ln", "fp32-4x8-normal", mere=0.0, mare=0.0)])
    fails, _ = B.check_test(f, failing, {"ln": 2.0})
    assert fails == ["ln[fp16-4x8-normal]: passed in the baseline, fails now"]


def test_non_finite_metrics_as_report_json_writes_them(tmp_path):
    f = tmp_path / "base.json"
    B.update_test(f, _report([_case("ln", "a")]), {})
    fails, _ = B.check_test(f, _report([_case("ln", "a", mare="inf")]), {})
    assert fails and "inf" in fails[0]


def test_baseline_file_errors(tmp_path):
    f = tmp_path / "base.json"
    with pytest.raises(OpkitError, match="cannot read it"):
        B.check_test(f, _report([]), {})
    f.write_text("{")
    with pytest.raises(OpkitError, match="not valid JSON"):
        B.check_test(f, _report([]), {})
    f.write_text(json.dumps({"opkit_baseline": 1, "kind": "diagnose"}))
    with pytest.raises(OpkitError, match="not an opkit test baseline"):
        B.check_test(f, _report([]), {})
    B.update_test(f, _report([_case("ln", "a")]), {})
    with pytest.raises(OpkitError, match="mode quick seed 0, this run is mode default"):
        B.check_test(f, _report([_case("ln", "a")], mode="default"), {})


def _diag(cosines, top1=None, policy="fp16-compute"):
    return {"policy": {"name": policy}, "threshold": 0.999, "input_hash": "abc", "result": {"top1": top1},
            "layers": [{"name": n, "cosine": c, "below": c is None or c < 0.999} for n, c in cosines]}


def test_model_level_gate(tmp_path):
    f = tmp_path / "model.json"
    base = _diag([("a", 0.99999), ("b", 0.9995), ("", 0.99998)], top1=1.0)
    B.update_diagnose(f, base)
    assert B.check_diagnose(f, base) == ([], [])
    fails, _ = B.check_diagnose(f, _diag([("a", 0.99999), ("b", 0.998), ("", 0.99998)], top1=1.0))
    assert fails and "layer b: was above" in fails[0]
    fails, _ = B.check_diagnose(f, _diag([("a", 0.99996), ("b", 0.9995), ("", 0.99998)], top1=0.5))
    assert any("1-cos grew" in x for x in fails) and any("top-1 agreement dropped" in x for x in fails)
    with pytest.raises(OpkitError, match="policy"):
        B.check_diagnose(f, _diag([("a", 1.0)], policy="cann-force-fp16"))


def test_op_yaml_baseline_tolerance(tmp_path):
    import shutil
    from pathlib import Path

    from opkit.errors import SpecError
    from opkit.opspec import load_spec

    src = Path(__file__).resolve().parent.parent / "ops" / "layer_norm_fp32"
    op = tmp_path / "ops" / "layer_norm_fp32"
    shutil.copytree(src, op)
    y = op / "op.yaml"
    text = y.read_text()
    assert "\naccuracy:\n" in text
    assert B.tolerance_of(load_spec(y)) == B.DEFAULT_TOLERANCE
    y.write_text(text.replace("\naccuracy:\n", "\naccuracy:\n  baseline_tolerance: 1.5\n"))
    assert B.tolerance_of(load_spec(y)) == 1.5
    y.write_text(text.replace("\naccuracy:\n", "\naccuracy:\n  baseline_tolerance: 0.5\n"))
    with pytest.raises(SpecError, match="baseline_tolerance"):
        load_spec(y)
