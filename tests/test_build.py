"""`opkit build` on the emulator: outputs, nothing written into user files, incremental rebuilds, compile errors.

Two tiny ops of the test's own (scalar loops over GM, so they depend on nothing but the emulator's
launch machinery): ScaleMul (a second input cast to the lead dtype, a named dim, a str attr with choices)
and RowSum (reduce over an attr-chosen dim with keepdim). The workspace is built once per session.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opkit.build import build

pytestmark = pytest.mark.slow   # the session fixture compiles two ops (~1-5 min on 2 busy cores)

SCALE_YAML = """\
op: ScaleMul
family: custom
summary: y = x * w * alpha (negated if mode == neg)
inputs:
  - {name: x, dtypes: [float32, float16], shape: [..., C]}
  - {name: w, shape: [C]}
outputs:
  - {name: y, dtype: x, shape: x}
attrs:
  - {name: alpha, type: float, default: 2.0}
  - {name: mode, type: str, default: plain, choices: [plain, neg]}
tests:
  dims: {"...": [1, 8], C: [1, 64]}
"""
SCALE_TILING = """\
#pragma once
#include <cstdint>
struct ScaleMulTilingData { uint32_t rows; uint32_t cols; uint32_t rowsPerBlock; float alpha; };
#ifndef __CCE_AICORE__
#include "opkit/tiling.h"
inline void ScaleMulTiling(opkit::TilingContext& ctx, ScaleMulTilingData& t) {
  t.cols = static_cast<uint32_t>(ctx.inputs.at(0).dim(-1));
  t.rows = static_cast<uint32_t>(ctx.inputs.at(0).numel() / t.cols);
  ctx.block_dim = t.rows < 4 ? 1 : 4;
  t.rowsPerBlock = (t.rows + ctx.block_dim - 1) / ctx.block_dim;
  t.alpha = static_cast<float>(ctx.attr_float("alpha")) * (ctx.attr_str("mode") == "neg" ? -1.0f : 1.0f);
}
#endif
"""
SCALE_KERNEL = """\
#include "kernel_operator.h"
#include "tiling.h"
extern "C" __global__ __aicore__ void scale_mul(GM_ADDR x, GM_ADDR w, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ScaleMulTilingData, td, tiling);
  if (td.alpha == 13.0f) {   // test hook: a UB over-allocation the emulator must report
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> big;
    pipe.InitBuffer(big, 1024 * 1024);
  }
  auto* xs = reinterpret_cast<__gm__ DTYPE_X*>(x);
  auto* ws = reinterpret_cast<__gm__ DTYPE_W*>(w);
  auto* ys = reinterpret_cast<__gm__ DTYPE_Y*>(y);
  uint32_t r0 = AscendC::GetBlockIdx() * td.rowsPerBlock;
  for (uint32_t r = r0; r < r0 + td.rowsPerBlock && r < td.rows; ++r)
    for (uint32_t c = 0; c < td.cols; ++c)
      ys[r * td.cols + c] = static_cast<DTYPE_Y>(static_cast<float>(xs[r * td.cols + c]) *
                                                 static_cast<float>(ws[c]) * td.alpha);
}
"""
ROWSUM_YAML = """\
op: RowSum
family: reduce
summary: sum over one dim
inputs:
  - {name: x, dtypes: [float32], shape: [..., C]}
outputs:
  - {name: y, dtype: x, shape: "reduce(x, dim, keepdim)"}
attrs:
  - {name: dim, type: int, default: -1, role: dim}
  - {name: keepdim, type: bool, default: false, role: keepdim}
tests:
  dims: {"...": [1, 8], C: [1, 64]}
"""
ROWSUM_TILING = """\
#pragma once
#include <cstdint>
struct RowSumTilingData { uint32_t rows; uint32_t cols; };
#ifndef __CCE_AICORE__
#include <stdexcept>
#include "opkit/tiling.h"
inline void RowSumTiling(opkit::TilingContext& ctx, RowSumTilingData& t) {
  if (ctx.attr_int("dim") != -1) throw std::invalid_argument("the binding must move dim to the end");
  t.cols = static_cast<uint32_t>(ctx.inputs.at(0).dim(-1));
  t.rows = static_cast<uint32_t>(ctx.inputs.at(0).numel() / t.cols);
  if (static_cast<int64_t>(t.rows) != ctx.outputs.at(0).numel()) throw std::invalid_argument("output size");
  ctx.block_dim = 1;
}
#endif
"""
ROWSUM_KERNEL = """\
#include "kernel_operator.h"
#include "tiling.h"
extern "C" __global__ __aicore__ void row_sum(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RowSumTilingData, td, tiling);
  auto* xs = reinterpret_cast<__gm__ DTYPE_X*>(x);
  auto* ys = reinterpret_cast<__gm__ DTYPE_Y*>(y);
  for (uint32_t r = 0; r < td.rows; ++r) {
    float s = 0;
    for (uint32_t c = 0; c < td.cols; ++c) s += static_cast<float>(xs[r * td.cols + c]);
    ys[r] = static_cast<DTYPE_Y>(s);
  }
}
"""
REFERENCE = "def reference(*args, **kwargs):\n    raise NotImplementedError\n"


def write_op(ws: Path, snake: str, yaml: str, tiling: str, kernel: str) -> Path:
    d = ws / "ops" / snake
    d.mkdir(parents=True, exist_ok=True)
    for name, text in (("op.yaml", yaml), ("tiling.h", tiling), ("kernel.cpp", kernel), ("reference.py", REFERENCE)):
        (d / name).write_text(text)
    return d


def digest(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def built_ws(tmp_path_factory):
    """A workspace with ScaleMul and RowSum, built once (cold build time in ``ws.cold_seconds``)."""
    ws = tmp_path_factory.mktemp("kit_ws")
    (ws / "opkit.yaml").write_text("opkit_version: test\n")
    write_op(ws, "scale_mul", SCALE_YAML, SCALE_TILING, SCALE_KERNEL)
    write_op(ws, "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    user_files = digest(ws / "ops")
    t0 = time.monotonic()
    build(workspace=ws)
    built_ws.cold_seconds = time.monotonic() - t0
    assert digest(ws / "ops") == user_files, "opkit build must not write into the user's op folders"
    return ws


def outputs(ws: Path) -> dict[str, int]:
    out = ws / "build" / "opkit" / "cpu"
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in sorted(out.glob("*/*.so"))}


def test_cold_build_produces_the_contract_outputs(built_ws):
    out = built_ws / "build" / "opkit" / "cpu"
    # kernel_fp32_naive.so (the naive variant of the compute dtype) is built on its first call, not here
    assert set(outputs(built_ws)) == {
        "scale_mul/kernel_fp32.so", "scale_mul/kernel_fp16.so", "scale_mul/kernel_fp16_naive.so",
        "row_sum/kernel_fp32.so"}
    # nothing generated per op: the CMake project is opkit's own cmake/workspace, fed the op folders
    assert not (out / "_gen").exists()
    cache = (out / "_cmake" / "CMakeCache.txt").read_text()
    assert f"OPKIT_OP_DIRS:UNINITIALIZED={built_ws / 'ops' / 'row_sum'};{built_ws / 'ops' / 'scale_mul'}" in cache
    for op in ("scale_mul", "row_sum"):
        assert (out / op / "build.json").is_file()
    # symbols: a kernel module exports the launch ABI (with a tensor list's member extents) and the op's tiling,
    # nothing else
    nm = subprocess.run(["nm", "-D", "--defined-only", str(out / "scale_mul" / "kernel_fp32.so")],
                        capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in nm.splitlines() if " T " in line}
    assert exported == {"opkit_kernel_launch", "opkit_kernel_set_list_members", "opkit_kernel_last_marks",
                        "opkit_tiling_size", "opkit_tiling_run"}, exported


def test_unchanged_rebuild_does_nothing_and_touching_one_kernel_rebuilds_only_its_modules(built_ws):
    build(workspace=built_ws)   # settle: opkit's own headers may have changed since the fixture built
    before = outputs(built_ws)
    build(workspace=built_ws)
    assert outputs(built_ws) == before
    kernel = built_ws / "ops" / "row_sum" / "kernel.cpp"
    time.sleep(0.01)
    kernel.write_text(kernel.read_text() + "// touched\n")
    logs = []
    build(workspace=built_ws, log=logs.append)
    after = outputs(built_ws)
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"row_sum/kernel_fp32.so"}, (changed, logs)


def test_building_one_named_op_leaves_the_other_alone(built_ws):
    for snake in ("scale_mul", "row_sum"):
        k = built_ws / "ops" / snake / "kernel.cpp"
        k.write_text(k.read_text() + "// again\n")
    before = outputs(built_ws)
    build(["ScaleMul"], workspace=built_ws)
    after = outputs(built_ws)
    changed = {k for k in after if after[k] != before[k]}
    assert changed and all(k.startswith("scale_mul/") for k in changed)
    build(workspace=built_ws)   # back to a fully built state for the other tests


def test_compile_error_exits_non_zero_with_the_users_lines_first(built_ws):
    kernel = built_ws / "ops" / "row_sum" / "kernel.cpp"
    good = kernel.read_text()
    kernel.write_text(good.replace("float s = 0;", "float s = 0\n    int broken = ;"))
    try:
        env = dict(os.environ)
        proc = subprocess.run([sys.executable, "-m", "opkit", "build", "row_sum"], cwd=built_ws,
                              capture_output=True, text=True, env=env)
        assert proc.returncode != 0
        lines = proc.stderr.splitlines()
        assert "errors in your files" in lines[0], proc.stderr[:2000]
        assert lines[1].startswith(f"{kernel}:") and "error:" in lines[1], proc.stderr[:2000]
        assert "--- full build output ---" in proc.stderr
        # each diagnostic once, although the kernel compiles for two variants
        first = lines[1]
        assert proc.stderr.split("--- full build output ---")[0].count(first) == 1
    finally:
        kernel.write_text(good)
    build(workspace=built_ws)
