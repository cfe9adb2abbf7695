"""Issues 14 and 25 row: `opkit build` after editing one kernel.cpp, rebuilt and loadable (goal <= 5 s), full and
`--dtype float32`.

    python benchmarks/bench_build_kernel_edit.py [--workspace WS] [--op layer_norm_fp32] [--repeat 3]

Default: a scratch workspace with a copy of the bundled LayerNormFP32, cold-built first (not timed here:
see bench_build_cold_op.py). Each repeat appends a comment to kernel.cpp and runs the real command."""
from __future__ import annotations

import argparse
import contextlib
import statistics
from pathlib import Path

import _bench


def measure(ws: Path, op: str, file: str, repeat: int) -> list[tuple[str, float, float]]:
    _bench.run(_bench.opkit_cmd("build", op), cwd=ws)          # start from a full, up-to-date build
    rows = []
    noop = [_bench.run(_bench.opkit_cmd("build", op, "--dtype", "float32"), cwd=ws)[:2] for _ in range(repeat)]
    wall, cpu = statistics.median(r[0] for r in noop), statistics.median(r[1] for r in noop)
    rows.append(("nothing changed (the fixed cost)", wall, cpu))
    print(f"   no edit, --dtype float32: wall {wall:6.1f} s, CPU {cpu:6.1f} s (median of {repeat})", flush=True)
    for label, extra in (("full build (3 dtypes x 2 variants)", ()), ("--dtype float32 (edit loop)", ("--dtype", "float32"))):
        runs = [_bench.edit_build(ws, op, file, extra) for _ in range(repeat)]
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        rows.append((label, wall, cpu))
        print(f"   edit {file}, {label}: wall {wall:6.1f} s, CPU {cpu:6.1f} s (median of {repeat})", flush=True)
    _bench.run(_bench.opkit_cmd("build", op), cwd=ws)          # leave it fully built
    return rows


def main(file: str = "kernel.cpp", goal: float = 5.0) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, default=None)
    ap.add_argument("--op", default="layer_norm_fp32")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    _bench.banner(f"opkit build after editing {file} ({args.op})")
    ctx = contextlib.nullcontext(args.workspace) if args.workspace else \
        _bench.scratch_workspace(["LayerNormFP32"], keep=args.keep)
    with ctx as ws:
        rows = measure(ws, args.op, file, args.repeat)
    _bench.done([(f"{label}, wall", wall, goal, " s") for label, wall, _ in rows] +
                [(f"{label}, CPU / 2 cores (idle-machine estimate)", cpu / 2, goal, " s") for label, _, cpu in rows])


if __name__ == "__main__":
    main()
