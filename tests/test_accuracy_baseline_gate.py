"""Acceptance of the op-level baseline gate (issue 13) on the real LayerNormFP32 built on the emulator:
a kernel made slightly worse but still inside the accuracy standard -- its fp16 output truncated instead
of rounded -- passes `opkit test` and fails `opkit test --baseline`; an identical rerun passes.

Truncation doubles the output rounding error (mean 1/2 ulp instead of 1/4, max 1 ulp instead of 1/2), so
MERE grows by ~2.0x: the cases whose growth lands beyond the 2x tolerance are named. Slow: builds one op
twice and runs the quick fp16 matrix four times.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mutants.layer_norm import SOURCE_NAME, copy_op

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "ops" / "layer_norm_fp32"
ROUND = "Cast(dst, xr, RoundMode::CAST_RINT, n);"
TRUNC = "Cast(dst, xr, RoundMode::CAST_TRUNC, n);"
pytestmark = pytest.mark.slow


def opkit(ws: Path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=ws, env=env, capture_output=True, text=True,
                          timeout=3600)


def test_truncating_layernorm_passes_the_standard_but_fails_the_baseline(tmp_path):
    ops = tmp_path / "ops"
    ops.mkdir()
    copy_op(SRC, ops, SOURCE_NAME)
    run = ("test", "--quick", "-k", "fp16", "-j", "2")
    r = opkit(tmp_path, "build", "-j", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    r = opkit(tmp_path, *run, "--update-baseline", "base.json")
    assert r.returncode == 0 and "baseline written: base.json" in r.stdout, r.stdout + r.stderr
    r = opkit(tmp_path, *run, "--baseline", "base.json")          # identical rerun: fixed seeds
    assert r.returncode == 0 and "no regression" in r.stdout, r.stdout + r.stderr

    copy_op(SRC, ops, SOURCE_NAME, edits=((ROUND, TRUNC),))       # the worse kernel
    assert TRUNC in (ops / "layer_norm_fp32" / "kernel.cpp").read_text()
    r = opkit(tmp_path, "build", "-j", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    r = opkit(tmp_path, *run)
    assert r.returncode == 0 and "verdict: PASS" in r.stdout, r.stdout + r.stderr
    r = opkit(tmp_path, *run, "--baseline", "base.json")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: PASS" in r.stdout                            # every case still inside the standard
    named = re.findall(r"^  (layer_norm_fp32\[fp16-[^\]]+\]): grew beyond 2x the baseline: (.*)$", r.stdout, re.M)
    assert named, r.stdout
    checked = 0
    for case, what in named:
        if "-special" in case:   # planted NaN/inf/0/subnormals change which elements the error is over: no clean 2x
            continue
        for before, after in re.findall(r"mere ([0-9.e-]+) -> ([0-9.e-]+)", what):
            assert 1.9 < float(after) / float(before) < 2.2, (case, what)   # the doubling, nothing else
            checked += 1
    assert checked, r.stdout
