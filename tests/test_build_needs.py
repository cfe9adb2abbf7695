"""`opkit build OP` builds OP and the ops it needs (its backward op, ops its reference.py calls); a test of
an op whose backward op is not built fails its opcheck cases only, saying why once; `opkit build -k` goes
on past a broken op. The workspace holds copies of the bundled SiluFP32 and SiluFP32Backward, built once."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from opkit import deps
from opkit.workspace import bundled_entries


def opkit(*args, cwd):
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=3600)


def _bundled(name):
    return next(e.spec for e in bundled_entries() if e.snake == name)


def test_an_ops_needs_are_its_backward_op_and_reference_calls(tmp_path):
    gelu = _bundled("gelu_fp32")
    assert [(n.op, n.why) for n in deps.direct(gelu)] == [
        ("gelu_fp32_backward", "its backward op (op.yaml backward.op)")]
    assert deps.direct(_bundled("gelu_fp32_backward")) == []
    found, unknown = deps.closure([gelu], lambda n: _bundled(n))
    assert [n.op for n in found] == ["gelu_fp32_backward"] and unknown == []
    # a reference.py that calls another opkit op needs it too; an unknown name is reported, not dropped
    spec = _bundled("reduce_sum_fp32")
    fake = tmp_path / "reference.py"
    fake.write_text("import torch\ndef reference(x):\n    return torch.ops.opkit.reduce_mean_fp32(x) + "
                    "torch.ops.opkit.no_such_op(x)\n")

    class Spec:                      # the fields deps reads, with this reference file
        snake, backward, reference_file = spec.snake, None, fake
    found, unknown = deps.closure([Spec], lambda n: _bundled(n) if n == "reduce_mean_fp32" else None)
    assert [(n.op, n.why) for n in found] == [("reduce_mean_fp32", "called by its reference.py")]
    assert [n.op for n in unknown] == ["no_such_op"]


@pytest.fixture(scope="module")
def silu_ws(tmp_path_factory):
    ws = tmp_path_factory.mktemp("needs_ws")
    for name in ("SiluFP32", "SiluFP32Backward"):
        r = opkit("new", name, cwd=ws)
        assert r.returncode == 0, r.stderr
    r = opkit("build", "silu_fp32", cwd=ws)           # names the forward op only
    assert r.returncode == 0, r.stdout + r.stderr
    (ws / "build-output.txt").write_text(r.stdout)
    return ws


def test_building_an_op_builds_its_backward_op(silu_ws):
    out = (silu_ws / "build-output.txt").read_text()
    assert "built silu_fp32 and the ops they need: silu_fp32_backward for cpu" in out, out
    for op in ("silu_fp32", "silu_fp32_backward"):
        assert (silu_ws / "build" / "opkit" / "cpu" / op / "build.json").is_file(), op


def test_missing_backward_op_fails_only_opcheck_and_says_so_once(silu_ws):
    stamp = silu_ws / "build" / "opkit" / "cpu" / "silu_fp32_backward" / "build.json"
    saved = stamp.read_text()
    stamp.unlink()                   # the backward op now counts as not built
    try:
        report = silu_ws / "report.json"
        r = opkit("test", "silu_fp32", "--quick", "--json", str(report), cwd=silu_ws)
    finally:
        stamp.write_text(saved)
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(report.read_text())
    assert data["cases"] and all(c["verdict"] == "pass" for c in data["cases"]), \
        [c["reason"] for c in data["cases"] if c["verdict"] != "pass"][:3]
    assert data["opcheck"] and all(c["verdict"] == "fail" for c in data["opcheck"])
    why = "needs silu_fp32_backward, its backward op (op.yaml backward.op), which is not built: run " \
          "`opkit build silu_fp32`"
    assert all(why in c["reason"] for c in data["opcheck"])
    summary = [ln for ln in r.stdout.splitlines() if why in ln]
    assert len(summary) == 1, r.stdout   # one summary line for every dtype's opcheck


def test_keep_going_builds_the_good_ops_and_names_the_broken_one(silu_ws):
    bad = silu_ws / "ops" / "broken_op"
    bad.mkdir()
    (bad / "op.yaml").write_text("op: BrokenOp\ninputs: 3\n")
    try:
        r = opkit("build", cwd=silu_ws)                     # without --keep-going: stops at the broken op.yaml
        assert r.returncode == 1 and "broken_op/op.yaml" in r.stderr, r.stderr
        assert "built" not in r.stdout
        r = opkit("build", "--keep-going", cwd=silu_ws)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "built silu_fp32, silu_fp32_backward for cpu; failed: broken_op" in r.stdout, r.stdout
        assert "broken_op/op.yaml:2" in r.stderr, r.stderr  # file:line of the fault
    finally:
        for p in bad.iterdir():
            p.unlink()
        bad.rmdir()
