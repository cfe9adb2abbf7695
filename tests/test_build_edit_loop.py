"""The edit loop of `opkit build` (issues 14, 25): a tiling.h edit compiles the op's tiling unit once and no
torch header at all, and
`--dtype` builds one dtype's kernels while deleting the other dtypes' modules it made stale, so a stale
module is never loaded. Uses the ScaleMul/RowSum workspace tests/test_build.py builds once per session."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from opkit.build import build
from opkit.errors import OpkitError
from opkit.harness import runner
from test_build import built_ws, outputs  # noqa: F401 (session fixture)

pytestmark = pytest.mark.slow   # needs the session build of tests/test_build.py


def _tiling_obj(ws):
    objs = list((ws / "build" / "opkit" / "cpu" / "_cmake" / "CMakeFiles" / "scale_mul__tiling.dir").rglob("*.o"))
    assert len(objs) == 1, objs
    return objs[0]


def test_tiling_edit_compiles_the_tiling_unit_once_and_relinks_the_modules(built_ws):
    """tiling.h is compiled once per op (an object linked into every kernel module of the op); the modules
    recompile because kernels include tiling.h for the struct. No torch header is compiled by any op build."""
    build(workspace=built_ws)
    tiling_o, before = _tiling_obj(built_ws), outputs(built_ws)
    t0 = tiling_o.stat().st_mtime_ns
    tiling = built_ws / "ops" / "scale_mul" / "tiling.h"
    time.sleep(0.01)
    tiling.write_text(tiling.read_text() + "// edited\n")
    logs = []
    build(["scale_mul"], workspace=built_ws, verbose=True, log=logs.append)
    after = outputs(built_ws)
    assert tiling_o.stat().st_mtime_ns != t0
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"scale_mul/kernel_fp32.so", "scale_mul/kernel_fp16.so", "scale_mul/kernel_fp16_naive.so"}, \
        changed
    compiles = [m for m in logs if " -c " in m]
    assert sum("kernel_tiling.cpp" in m for m in compiles) == 1, compiles
    assert not any("torch/include" in m for m in compiles), "an op build compiled torch headers"


def test_dtype_build_deletes_the_stale_modules_of_other_dtypes(built_ws):
    out = built_ws / "build" / "opkit" / "cpu" / "scale_mul"
    build(workspace=built_ws)
    kernel = built_ws / "ops" / "scale_mul" / "kernel.cpp"
    good = kernel.read_text()
    time.sleep(0.01)
    kernel.write_text(good + "// edited\n")
    try:
        logs = []
        build(["scale_mul"], workspace=built_ws, dtype=["fp32"], log=logs.append)
        assert (out / "kernel_fp32.so").is_file() and not (out / "kernel_fp32_naive.so").exists()  # on demand
        assert not (out / "kernel_fp16.so").exists() and not (out / "kernel_fp16_naive.so").exists(), logs
        assert any("removed the out-of-date kernel_fp16.so" in m for m in logs), logs
        assert json.loads((out / "build.json").read_text())["dtypes"] == ["float32"]
        with pytest.raises(OpkitError, match=r"built for float32 only .*opkit test --dtype float32"):
            runner.run(["scale_mul"], workspace=built_ws)
        # A fresh process: fp32 runs the new build; fp16 refuses instead of running the old kernel.
        code = (f"import torch, opkit\nopkit.load({str(built_ws)!r}, ops=['scale_mul'], bundled=False, quiet=True)\n"
                "x = torch.ones(2, 8)\nprint(float(torch.ops.opkit.scale_mul(x, x[0]).sum()))\n"
                "try:\n    torch.ops.opkit.scale_mul(x.half(), x[0].half())\n"
                "except RuntimeError as e:\n    print(str(e).splitlines()[0])\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[0] == "32.0"
        assert "cannot load kernel module" in proc.stdout and "kernel_fp16.so" in proc.stdout, proc.stdout
        # unchanged sources: a second --dtype build deletes nothing it did not make stale
        build(["scale_mul"], workspace=built_ws, dtype=["fp32"])
        assert (out / "kernel_fp32.so").is_file()
    finally:
        kernel.write_text(good)
        build(workspace=built_ws)
    assert (out / "kernel_fp16.so").is_file()
    assert json.loads((out / "build.json").read_text())["dtypes"] == ["float32", "float16"]


def test_dtype_build_rejects_unknown_dtypes(built_ws):
    with pytest.raises(OpkitError, match=r"--dtype int8: not a dtype"):
        build(["scale_mul"], workspace=built_ws, dtype=["int8"])
    with pytest.raises(OpkitError, match=r"op row_sum has no such dtype .*inputs\[0\]\.dtypes is float32"):
        build(["row_sum"], workspace=built_ws, dtype=["fp16"])


def test_build_of_a_workspace_op_never_imports_torch(built_ws):
    """An `opkit build` with nothing to rebuild is the fixed cost of every edit loop: it must not import torch
    (~3 s), not even to find the bundled ops a workspace op `needs` (LayerNormFP32 needs its bundled backward:
    the bundled-op cache folder is found without torch)."""
    code = ("import sys; from opkit.cli.app import main\n"
            "from opkit.loader import ensure_bundled_built\n"
            "from opkit.workspace import bundled_entries\n"
            "try: main(['build', 'scale_mul'])\n"
            "except SystemExit as e: assert not e.code, e.code\n"
            "need = [e.spec for e in bundled_entries() if e.spec and e.spec.snake == 'layer_norm_fp32_backward']\n"
            "assert [s.snake for s, _ in ensure_bundled_built(need, quiet=True)] == ['layer_norm_fp32_backward']\n"
            "assert 'torch' not in sys.modules, 'opkit build imported torch'\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=built_ws, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr

def test_bundled_cache_folder_is_the_same_with_and_without_torch_imported():
    """The folder is keyed by torch's installed version, read the same way before and after `import torch`,
    so the CLI (no torch) and a Python session (torch imported) share one cache."""
    code = ("import sys; from opkit.toolchain.cache import bundled_cache_dir\n"
            "before = bundled_cache_dir(); assert 'torch' not in sys.modules\n"
            "import torch; assert bundled_cache_dir() == before; print(before)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
