"""The pytest plugin end to end, with plain-torch stand-in ops (pytest_opkit_handle) instead of a build:
collection from op.yaml, ids, -k/-m, isolation of crashing / hanging / rule-breaking cases under xdist,
reports (JSON fields, HTML), progress summary, exit code."""
import json
from pathlib import Path

import pytest

from harness_standins import write_op

pytest_plugins = ["pytester"]
TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import ctypes, sys, time
import torch
sys.path.insert(0, {str(TESTS)!r})
from harness_standins import layer_norm_fp32_compute, layer_norm_naive
from opkit.harness.execute import OpHandle


def op(x, w, b, eps=1e-5):
    if tuple(x.shape) == (5, 17) and x.dtype == torch.float16:
        ctypes.string_at(0)                                   # segfault
    if tuple(x.shape) == (5, 15) and x.dtype == torch.float16:
        time.sleep(600)                                       # hang
    if tuple(x.shape) == (1, 7) and x.dtype == torch.float32:
        raise RuntimeError("opkit emulator: [gm-bounds] DataCopy at /ws/kernel.cpp:7 (block 0): read 32 bytes "
                           "past the end of x")
    return layer_norm_fp32_compute(x, w, b, eps)


def pytest_opkit_handle(spec, workspace, target):
    return OpHandle(op, layer_norm_naive)
"""


@pytest.fixture
def ws(pytester):
    write_op(pytester.path)
    pytester.makeconftest(CONFTEST)
    return pytester


def test_isolation_reports_and_progress(ws):
    sel = ("(fp16-64x1000-normal or fp32-64x1000-normal or fp16-5x17-normal or fp16-5x15-normal or "
           "fp32-1x7-normal) and not eps")      # not the eps variants of the same shapes
    res = ws.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-p", "no:terminal", "--opkit-progress",
                                  "--opkit-no-opcheck", "--opkit-timeout", "20", "-k", sel,
                                  "--opkit-report-json", "out/r.json", timeout=600)
    assert res.ret == 1
    data = json.loads((ws.path / "out" / "r.json").read_text())
    cases = {c["id"]: c for c in data["cases"]}
    assert set(cases) == {"fp16-64x1000-normal", "fp32-64x1000-normal", "fp16-5x17-normal", "fp16-5x15-normal",
                          "fp32-1x7-normal"}
    assert cases["fp16-5x17-normal"]["verdict"] == "fail"
    assert "Segmentation fault" in cases["fp16-5x17-normal"]["reason"]
    assert "timed out after 20 s" in cases["fp16-5x15-normal"]["reason"]
    assert cases["fp32-1x7-normal"]["reason"].startswith("emulator rule [gm-bounds] broken by DataCopy at "
                                                         "/ws/kernel.cpp:7")
    for cid in ("fp16-5x17-normal", "fp16-5x15-normal", "fp32-1x7-normal"):
        assert cases[cid]["rerun"] == f"opkit test layer_norm_fp32 -k {cid}"
    # the run went on: every other selected case ran and passed
    others = [c for i, c in cases.items() if i not in ("fp16-5x17-normal", "fp16-5x15-normal", "fp32-1x7-normal")]
    assert others and all(c["verdict"] == "pass" for c in others)
    for c in data["cases"]:
        for k in ("op", "dtype", "shapes", "distribution", "seed", "verdict", "reason", "metrics", "naive_metrics"):
            assert k in c
    ok = cases["fp16-64x1000-normal"]
    assert ok["metrics"]["mere"] < 2 ** -10 and ok["naive_metrics"]["mere"] is not None
    out = res.stdout.str()
    assert "FAILED 3 of" in out and "failing shapes:" in out and "5x17" in out
    assert "rerun alone: opkit test layer_norm_fp32 -k fp16-5x17-normal" in out
    html = ws.path / "build" / "opkit" / "reports" / "report-default.html"
    assert html.is_file() and "data:image/png;base64" in html.read_text()
    assert f"html report: {html}" in out
    assert "verdict: FAIL" in out
    ac = data["summary"]["assert_close"]
    assert ac["judged"] == 2 and ac["passed"] == sum(bool(c["metrics"].get("assert_close")) for c in others)
    assert f"assert_close with default tolerances: {ac['passed']} of 2 float cases pass" in out
    assert (ws.path / "build" / "opkit" / "reports" / "report-default.json").is_file()


def test_pytest_native_ids_markers_and_k(ws):
    res = ws.runpytest_subprocess("-p", "no:cacheprovider", "--opkit-quick", "--opkit-no-opcheck", "-m", "fp32",
                                  "-k", "offset1000 or scale50", "-v", timeout=600)
    res.assert_outcomes(passed=6)
    res.stdout.fnmatch_lines(["*op.yaml::layer_norm_fp32[[]fp32-64x1000-offset1000[]] PASSED*",
                              "*opkit harness*", "*verdict: PASS*"])


def test_spec_errors_are_collection_errors(pytester):
    d = write_op(pytester.path)
    (d / "op.yaml").write_text((d / "op.yaml").read_text().replace("standard: mere_mare", "standard: loose"))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--opkit-quick", timeout=300)
    assert res.ret != 0
    res.stdout.fnmatch_lines(["*op.yaml:*accuracy.standard*"])


def test_crash_reason_reads_the_head_of_a_long_fault_dump(tmp_path):
    # faulthandler writes the verdict first, then up to 100 frames; with a deep pytest stack and long
    # site-packages paths (CI's checkout) the dump runs past 4 KB, which once hid "Segmentation fault".
    from opkit.harness.plugin import crash_reason, read_crash
    frame = '  File "/check/work/main/.venv/lib/python3.11/site-packages/pluggy/_callers.py", line 103 in _multicall\n'
    (tmp_path / "gw3.fault").write_text("Fatal Python error: Segmentation fault\n\nStack (most recent call first):\n"
                                        + frame * 100)
    info = read_crash(tmp_path, "gw3")
    assert crash_reason(info) == "process crashed: Segmentation fault"
    (tmp_path / "gw3.fault").write_text("")
    assert crash_reason(read_crash(tmp_path, "gw3")) == "process crashed (no message; the worker died)"
