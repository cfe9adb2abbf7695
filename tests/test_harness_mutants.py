"""Acceptance of the harness (issue 4) on the real LayerNormFP32 built on the emulator:

- five mutants (tests/mutants/layer_norm.py) each fail `opkit test`, and the failures sit exactly on the
  shapes / distributions the bug can reach, named in the console summary;
- the unmutated op passes, and its JSON report covers fp16/bf16/fp32, a last dim not a multiple of 16 and
  a distribution with |x| >= 100;
- a golden off by 0.2 % fails fp16 and fp32 (bf16 passes: its T = 2^-7), off by 2 % fails bf16 too.

Slow: builds six ops (one `opkit build`) and runs the default matrix on all of them.
"""
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from mutants.layer_norm import MUTANTS, SOURCE_NAME, copy_op

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "ops" / "layer_norm_fp32"
pytestmark = pytest.mark.slow


def opkit(ws: Path, *args, timeout=3600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=ws, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    if not (SRC / "kernel.cpp").is_file():
        pytest.fail(f"{SRC} is missing: the harness acceptance needs the bundled LayerNormFP32")
    ws = tmp_path_factory.mktemp("mutants")
    ops = ws / "ops"
    ops.mkdir()
    copy_op(SRC, ops, SOURCE_NAME)
    for m in MUTANTS:
        copy_op(SRC, ops, m.name, m.edits)
    r = opkit(ws, "build", "-j", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    return ws


@pytest.fixture(scope="module")
def default_run(ws):
    r = opkit(ws, "test", "--json", "all.json")
    data = json.loads((ws / "all.json").read_text())
    by_op = defaultdict(list)
    for c in data["cases"]:
        by_op[c["op"]].append(c)
    return r, data, by_op


def test_unmutated_op_passes_and_report_covers_the_matrix(ws, default_run):
    r, data, by_op = default_run
    cases = by_op["layer_norm_fp32"]
    bad = [(c["id"], c["reason"]) for c in cases if c["verdict"] != "pass"]
    assert not bad, bad
    assert [c for c in data["opcheck"] if c["op"] == "layer_norm_fp32" and c["verdict"] != "pass"] == []
    assert {c["dtype"] for c in cases} == {"float16", "bfloat16", "float32"}
    assert any(c["shapes"]["x"][-1] % 16 for c in cases)
    assert any(c["input_range"]["max_abs"] >= 100 for c in cases)
    for c in cases:
        for k in ("op", "dtype", "shapes", "distribution", "seed", "verdict", "reason", "metrics", "naive_metrics"):
            assert k in c
        for k in ("max_abs_err", "max_rel_err", "mere", "mare", "cosine"):
            assert k in c["metrics"]
    assert "layer_norm_fp32: all" in r.stdout
    # a clean run of the op alone exits 0
    r2 = opkit(ws, "test", "layer_norm_fp32", "--quick")
    assert r2.returncode == 0, r2.stdout + r2.stderr


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.snake for m in MUTANTS])
def test_each_mutant_fails_where_its_bug_reaches(default_run, mutant):
    r, data, by_op = default_run
    assert r.returncode != 0
    cases = by_op[mutant.snake]
    failed = [c for c in cases if c["verdict"] != "pass"]
    assert failed, f"{mutant.what}: no case failed"
    assert all(c["reason"] for c in failed)
    if mutant.must_fail_only is not None:
        wrong = [c["id"] for c in cases if mutant.must_fail_only(c) is not None
                 and (c["verdict"] != "pass") != mutant.must_fail_only(c)]
        assert not wrong, f"{mutant.what}: verdicts disagree with the bug's reach on {wrong}"
    tags = {c["distribution_tag"] for c in failed}
    for d in mutant.failing_distributions:
        assert d in tags, f"{mutant.what}: no failure on {d} (failing: {sorted(tags)})"
    out = r.stdout
    assert f"{mutant.snake}: FAILED {len(failed)} of {len(cases)} cases" in out
    block = out.split(f"{mutant.snake}: FAILED", 1)[1]
    assert "failing shapes:" in block and "failing distributions:" in block


@pytest.mark.parametrize("factor,failing", [("1.002", {"float16", "float32"}),
                                            ("1.02", {"float16", "bfloat16", "float32"})])
def test_golden_off_by_a_factor(ws, factor, failing):
    ref = ws / "ops" / "layer_norm_fp32" / "reference.py"
    original = ref.read_text()
    assert original.count("return F.layer_norm(") == 1, "reference.py changed shape; update this test"
    try:
        ref.write_text(original.replace("return F.layer_norm(", f"return {factor} * F.layer_norm("))
        r = opkit(ws, "test", "layer_norm_fp32", "--quick", "-k", "64x1000-normal and not opcheck",
                  "--json", "off.json")
        assert r.returncode != 0
        data = json.loads((ws / "off.json").read_text())
        got = {c["dtype"] for c in data["cases"] if c["verdict"] != "pass"}
        assert {c["dtype"] for c in data["cases"]} == {"float16", "bfloat16", "float32"}
        assert got == failing, [(c["id"], c["reason"]) for c in data["cases"]]
    finally:
        ref.write_text(original)
