"""Build timings of `opkit build` on this machine (issue 3): cold build of a workspace, rebuild after
touching one kernel, and a no-op rebuild.

    python benchmarks/bench_build.py                 # workspace = a fresh LayerNormFP32 scaffold
    python benchmarks/bench_build.py --all-bundled   # workspace = copies of every bundled op

Prints one line per figure and a JSON summary. Runs in a temporary folder; nothing else is touched.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from opkit.build import build, default_jobs
from opkit.scaffold import new
from opkit.workspace import bundled_entries


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all-bundled", action="store_true", help="scaffold every bundled op, not just LayerNormFP32")
    ap.add_argument("-j", "--jobs", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    args = ap.parse_args()

    ws = Path(tempfile.mkdtemp(prefix="opkit-bench-build-"))
    names = [e.spec.name for e in bundled_entries() if e.spec] if args.all_bundled else ["LayerNormFP32"]
    for n in names:
        new(n, cwd=ws)
    jobs = args.jobs or default_jobs()
    res = {"ops": len(names), "jobs": jobs, "cpus": os.cpu_count(),
           "load_avg_before": os.getloadavg()[0]}
    res["cold_s"] = timed(lambda: build(workspace=ws, jobs=jobs))
    res["noop_s"] = timed(lambda: build(workspace=ws, jobs=jobs))
    kernel = ws / "ops" / "layer_norm_fp32" / "kernel.cpp"
    if not kernel.is_file():
        kernel = next((ws / "ops").glob("*/kernel.cpp"))
    kernel.write_text(kernel.read_text() + "\n// touched by bench_build.py\n")
    res["touch_one_kernel_s"] = timed(lambda: build(workspace=ws, jobs=jobs))
    tiling = kernel.with_name("tiling.h")
    tiling.write_text(tiling.read_text() + "\n// touched by bench_build.py\n")
    res["touch_one_tiling_s"] = timed(lambda: build(workspace=ws, jobs=jobs))
    res["load_avg_after"] = os.getloadavg()[0]
    print(f"workspace: {len(names)} op(s) ({', '.join(names) if len(names) < 4 else 'all bundled'}), -j{jobs}")
    print(f"cold build:                 {res['cold_s']:7.1f} s")
    print(f"no-op rebuild:              {res['noop_s']:7.2f} s")
    print(f"rebuild, one kernel.cpp:    {res['touch_one_kernel_s']:7.1f} s  (that op's kernel modules only)")
    print(f"rebuild, one tiling.h:      {res['touch_one_tiling_s']:7.1f} s  (that op's modules + binding)")
    print(f"load average before/after:  {res['load_avg_before']:.1f} / {res['load_avg_after']:.1f}  "
          "(other work on the machine inflates the figures)")
    print(json.dumps(res))
    if args.keep:
        print(f"kept {ws}")
    else:
        import shutil
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
