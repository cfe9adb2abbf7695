"""Issue 25 row: cold build of the whole bundled library (goal <= 180 s on 2 cores).

    python benchmarks/bench_build_library.py [--jobs 2] [--cmake]

A scratch workspace holding a copy of every bundled op (ops/ copied, opkit.yaml marker), an empty build
folder, then the real `opkit build -j JOBS`; plus opkit's torch-side library, which a fresh machine builds
once per torch version (`opkit.registration.runtime()` with an empty OPKIT_CACHE_DIR). `--cmake` also times the top-level CMake project of the
checkout (`cmake --preset cpu && cmake --build --preset cpu`) into a fresh binary folder. ccache is
switched off (OPKIT_NO_CCACHE=1, CCACHE_DISABLE=1): a cold build is what a fresh machine pays.
Figures: wall seconds, and CPU seconds of the compilers (children) -- on a busy shared machine the
CPU figure / cores is the idle-machine estimate.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import _bench


def cold_opkit_build(jobs: int) -> tuple[float, float, int]:
    ws = Path(tempfile.mkdtemp(prefix="opkit-bench-lib-"))
    try:
        shutil.copytree(_bench.ROOT / "ops", ws / "ops")
        (ws / "opkit.yaml").write_text("# scratch workspace of bench_build_library.py\n")
        env = dict(os.environ, OPKIT_NO_CCACHE="1", CCACHE_DISABLE="1")
        wall, cpu, _ = _bench.run(_bench.opkit_cmd("build", "-j", str(jobs)), cwd=ws, env=env)
        n = sum(1 for _ in (ws / "ops").glob("*/op.yaml"))
        return wall, cpu, n
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def cold_runtime() -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="opkit-bench-cache-") as cache:
        env = dict(os.environ, OPKIT_CACHE_DIR=cache, OPKIT_NO_CCACHE="1", CCACHE_DISABLE="1")
        code = "from opkit import registration; registration.runtime(quiet=True)"
        wall, cpu, _ = _bench.run([sys.executable, "-c", code], cwd=Path(cache), env=env)
    return wall, cpu


def cold_cmake_build(jobs: int) -> tuple[float, float]:
    binary = Path(tempfile.mkdtemp(prefix="opkit-bench-cmake-"))
    try:
        env = dict(os.environ, OPKIT_NO_CCACHE="1", CCACHE_DISABLE="1")
        cmake = _bench.cmake()
        w1, c1, _ = _bench.run([cmake, "--preset", "cpu", "-B", str(binary)], cwd=_bench.ROOT, env=env)
        w2, c2, _ = _bench.run([cmake, "--build", str(binary), "-j", str(jobs)], cwd=_bench.ROOT, env=env)
        return w1 + w2, c1 + c2
    finally:
        shutil.rmtree(binary, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cmake", action="store_true", help="also time the top-level CMake project (cpu preset)")
    args = ap.parse_args()
    _bench.banner(f"cold build of the whole bundled library (-j{args.jobs})")
    wall, cpu, n = cold_opkit_build(args.jobs)
    print(f"   opkit build, {n} ops: wall {wall:6.1f} s, CPU {cpu:6.1f} s", flush=True)
    r_wall, r_cpu = cold_runtime()
    print(f"   + opkit's torch-side library (once per torch version): wall {r_wall:6.1f} s, CPU {r_cpu:6.1f} s",
          flush=True)
    wall, cpu = wall + r_wall, cpu + r_cpu
    rows = [("whole library + torch-side library, wall", wall, 180.0, " s"),
            ("whole library + torch-side library, CPU / 2 cores (idle-machine estimate)", cpu / 2, 180.0, " s")]
    if args.cmake:
        wall, cpu = cold_cmake_build(args.jobs)
        print(f"   cmake --preset cpu && cmake --build: wall {wall:6.1f} s, CPU {cpu:6.1f} s", flush=True)
        rows += [("cmake preset, wall", wall, 180.0, " s"), ("cmake preset, CPU / 2 cores", cpu / 2, 180.0, " s")]
    _bench.done(rows)


if __name__ == "__main__":
    main()
