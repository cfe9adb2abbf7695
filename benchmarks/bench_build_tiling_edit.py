"""Issue 14 row: `opkit build` after editing tiling.h (goal <= 8 s), full and `--dtype float32`.

    python benchmarks/bench_build_tiling_edit.py [--workspace WS] [--op layer_norm_fp32] [--repeat 3]

Same procedure as bench_build_kernel_edit.py, on tiling.h: the kernel modules (which include it for the
struct) and the op's small tiling unit recompile; no torch header is compiled (one torch-side library
serves every op)."""
from __future__ import annotations

import bench_build_kernel_edit

if __name__ == "__main__":
    bench_build_kernel_edit.main(file="tiling.h", goal=8.0)
