"""Three of the emulator's element loops, one at a time (the name is the first one's). Default: ReduceSum's float
count-form loop (opkit_emu/reduce.h reduce_sum_loop<float>) alone, ns a call, for a row of n
floats, before (another tree) and after (this one), at each ISA level, both in one run. ``--loop max_index``:
ReduceMax's index loop (reduce.h reduce_arg_loop<float, true>) instead; ``--loop exp``: Exp's element loop
(opkit_emu/host_expf.h loop: the widest vector loop the CPU has, whatever the level).

    nice -n 10 python benchmarks/bench_reduce_sum.py --before DIR [--loop reduce_sum|max_index|exp]
                                                     [--levels x86-64 x86-64-v3 x86-64-v4]
                                                     [--n 64 128 1024 8192] [--rounds 7]

DIR: an opkit tree (`git archive main python | tar -x -C DIR`). A small C++ timing program is compiled against each
tree's emulator headers with opkit's emulator flags at -O2 and the level's -march (levels this host cannot run are
left out), and the programs run in turn, round after round, every other round in reverse order (so a change in the
machine's load hits both sides);
per row the median of the rounds (and the best). One thread, the calling thread only. Prints the load before and
after.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

import _bench

PROGRAM = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "kernel_operator.h"
#include "opkit_emu/reduce.h"
#include "tikicpulib.h"
int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    const uint32_t n = static_cast<uint32_t>(std::atoi(argv[a]));
    std::vector<float> row(n);
    for (uint32_t i = 0; i < n; ++i) row[i] = 0.001f * static_cast<float>(i % 997) - 0.5f;
    const int calls = 20000000 / static_cast<int>(n) + 1000;   // ~20 M floats summed a row
    std::vector<float> out(n);
    volatile float sink = 0.0f;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < calls; ++k) sink = sink + (CALL);
    const auto t1 = std::chrono::steady_clock::now();
    std::printf("%u %.3f\n", n, std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
  }
  return 0;
}
"""


CALLS = {   # the timed call, a float expression
    "reduce_sum": "opkit_emu::reduce_sum_loop<float>(row.data(), n)",
    "max_index": "static_cast<float>(opkit_emu::reduce_arg_loop<float, true>(row.data(), n))",
    "exp": "(opkit_emu::host_expf::loop(out.data(), row.data(), n), out[n - 1])",
}


def compile_side(tree: Path, level: str, src: Path, out: Path, loop: str = "reduce_sum") -> None:
    from opkit import emulator
    from opkit.toolchain import isa

    here = _bench.ROOT.resolve()
    flags = [f.replace(str(here), str(tree.resolve())) if f.startswith("-I") else f
             for f in emulator.cflags(profile="ascend910b")]
    cmd = ["g++", "-O2", "-g0", *flags, *isa.flags(level), f"-DCALL={CALLS[loop]}", str(src), "-o", str(out),
           "-lpthread"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"compile of {src} against {tree} at {level} failed:\n{r.stderr[-3000:]}")


def main() -> None:
    from opkit.toolchain import isa

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, type=Path, help="the other opkit tree (its python/ is read)")
    ap.add_argument("--levels", nargs="+", default=None, help="ISA levels (default: every one up to the host's)")
    ap.add_argument("--n", nargs="+", type=int, default=[64, 128, 1024, 8192], help="row lengths (floats)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--loop", choices=sorted(CALLS), default="reduce_sum", help="the loop timed")
    args = ap.parse_args()
    if not (args.before / "python/opkit/emulator/include/opkit_emu/reduce.h").exists():
        raise SystemExit(f"--before {args.before}: no python/opkit/emulator/include/opkit_emu/reduce.h there")
    runnable = isa.levels()[:isa.levels().index(isa.host_level()) + 1]
    levels = [lvl for lvl in (args.levels or runnable) if lvl in runnable]

    _bench.banner(f"{CALLS[args.loop]}, ns a call (median of rounds, best in brackets), before -> after")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "reduce_sum_time.cpp"
        src.write_text(PROGRAM)
        exes = {}
        for lvl in levels:
            for side, tree in (("before", args.before), ("after", _bench.ROOT)):
                exes[lvl, side] = Path(tmp) / f"{side}_{lvl}"
                compile_side(tree, lvl, src, exes[lvl, side], args.loop)
        times: dict[tuple[str, str, int], list[float]] = {}
        for k in range(args.rounds):
            order = list(exes.items())
            for (lvl, side), exe in order if k % 2 == 0 else order[::-1]:   # neither side always runs first
                out = subprocess.run([str(exe), *map(str, args.n)], capture_output=True, text=True, check=True).stdout
                for line in out.split("\n"):
                    if line:
                        n, ns = line.split()
                        times.setdefault((lvl, side, int(n)), []).append(float(ns))
    print(f"   after:  {_bench.load()}")
    for lvl in levels:
        for n in args.n:
            b, a = times[lvl, "before", n], times[lvl, "after", n]
            mb, ma = statistics.median(b), statistics.median(a)
            print(f"   {lvl:10s} n={n:<6d} {mb:9.1f} ({min(b):.1f}) -> {ma:9.1f} ({min(a):.1f})  {mb / ma:.2f}x")


if __name__ == "__main__":
    main()
