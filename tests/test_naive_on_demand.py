"""The naive module of an op's compute dtype (kernel_fp32_naive.so for an FP32-compute op) is not built by
`opkit build` -- the harness reuses the opkit output for those cases -- but on the first
``torch.ops.opkit_naive`` call in that dtype, from the sources the loaded modules came from; a build that makes
it stale deletes it, and sources edited since the last build give a clear error instead of a mismatched module
(issue 38 item 3). Uses the ScaleMul/RowSum workspace tests/test_build.py builds once per session."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from opkit.build import build
from test_build import built_ws  # noqa: F401 (session fixture)

pytestmark = pytest.mark.slow   # needs the session build of tests/test_build.py

CALL = """
import warnings, torch, opkit
warnings.simplefilter("ignore")
opkit.load({ws!r}, ops=['scale_mul'], bundled=False, quiet=True)
x = torch.arange(16, dtype=torch.float32).reshape(2, 8) / 7
ours = torch.ops.opkit.scale_mul(x, x[0])
try:
    naive = torch.ops.opkit_naive.scale_mul(x, x[0])
    print("same" if torch.equal(naive.view(torch.int32), ours.view(torch.int32)) else "differs")
except RuntimeError as e:
    print("error:", " ".join(str(e).split()))
"""


def _call(ws) -> str:
    proc = subprocess.run([sys.executable, "-c", CALL.format(ws=str(ws))], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_compute_dtype_naive_module_is_built_on_its_first_call(built_ws):
    out = built_ws / "build" / "opkit" / "cpu" / "scale_mul"
    build(workspace=built_ws)
    (out / "kernel_fp32_naive.so").unlink(missing_ok=True)
    build(workspace=built_ws)
    assert not (out / "kernel_fp32_naive.so").exists(), "opkit build made the on-demand module"
    assert (out / "kernel_fp16_naive.so").is_file()            # the harness's naive column: built with the op
    assert _call(built_ws) == "same"
    assert (out / "kernel_fp32_naive.so").is_file()
    mtime = (out / "kernel_fp32_naive.so").stat().st_mtime_ns
    assert _call(built_ws) == "same"                              # current: loaded, not built again
    assert (out / "kernel_fp32_naive.so").stat().st_mtime_ns == mtime


def test_a_build_deletes_the_stale_on_demand_module_and_edited_sources_refuse_it(built_ws):
    out = built_ws / "build" / "opkit" / "cpu" / "scale_mul"
    build(workspace=built_ws)
    assert _call(built_ws) == "same"
    kernel = built_ws / "ops" / "scale_mul" / "kernel.cpp"
    good = kernel.read_text()
    try:
        time.sleep(0.01)
        kernel.write_text(good + "static constexpr int opkit_test_edit = 1;\n")
        logs: list[str] = []
        build(workspace=built_ws, log=logs.append)
        assert not (out / "kernel_fp32_naive.so").exists(), logs
        assert any("removed the out-of-date kernel_fp32_naive.so" in m for m in logs), logs
        # edited again, not rebuilt: the loaded kernel_fp32.so is the old build; the naive one is refused
        time.sleep(0.01)
        kernel.write_text(good + "static constexpr int opkit_test_edit = 2;\n")
        msg = _call(built_ws)
        assert msg.startswith("error:") and "kernel_fp32_naive.so is built on first use" in msg, msg
        assert "changed since the last `opkit build`" in msg, msg
        assert not (out / "kernel_fp32_naive.so").exists()
    finally:
        kernel.write_text(good)
        build(workspace=built_ws)


def test_an_edit_to_another_ops_op_yaml_does_not_refuse_it(built_ws):
    # Ninja's dry run stops at `Re-running CMake...` when any op.yaml is newer than build.ninja; that is not a
    # change to scale_mul's kernel_fp32.so (review of iso9, M1)
    out = built_ws / "build" / "opkit" / "cpu" / "scale_mul"
    build(workspace=built_ws)
    (out / "kernel_fp32_naive.so").unlink(missing_ok=True)
    other = built_ws / "ops" / "row_sum" / "op.yaml"
    good = other.read_text()
    try:
        time.sleep(0.01)
        other.write_text(good + "# a comment\n")
        assert _call(built_ws) == "same"
        assert (out / "kernel_fp32_naive.so").is_file()
    finally:
        other.write_text(good)
        build(workspace=built_ws)


def test_a_refusal_reads_as_the_build_error_without_a_python_traceback(built_ws):
    kernel = built_ws / "ops" / "scale_mul" / "kernel.cpp"
    out = built_ws / "build" / "opkit" / "cpu" / "scale_mul"
    build(workspace=built_ws)
    (out / "kernel_fp32_naive.so").unlink(missing_ok=True)
    good = kernel.read_text()
    try:
        time.sleep(0.01)
        kernel.write_text(good + "static constexpr int opkit_test_edit = 3;\n")
        msg = _call(built_ws)
        assert "failed: BuildError: opkit.scale_mul:" in msg, msg
        assert "At:" not in msg and "builder.py(" not in msg, msg
    finally:
        kernel.write_text(good)
        build(workspace=built_ws)
