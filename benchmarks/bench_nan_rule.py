"""The NaN rule's cost (opkit_emu/nan_rule.h) on the element loops: a Mul and an Adds pass over 16384 floats, 200
times, best of 20, compiled with g++ -O2 and each tree's emulator flags at the baseline and at the host's level.

    nice -n 10 python benchmarks/bench_nan_rule.py --before DIR

``--before DIR``: another opkit tree (DIR/python: `git archive main python | tar -x -C DIR`), measured in the same
run. Prints the load average before and after.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = r"""
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "kernel_operator.h"
int main() {
  const uint32_t n = 16384;
  std::vector<float> a(n, 1.1f), b(n, 0.9f), d(n);
  double best = 1e9;
  for (int r = 0; r < 20; ++r) {
    auto t = std::chrono::steady_clock::now();
    for (int k = 0; k < 200; ++k) {
      opkit_emu::bin_loop<opkit_emu::OpMul, float>(d.data(), a.data(), b.data(), n);
      opkit_emu::scalar_loop<opkit_emu::OpAdd, float>(d.data(), d.data(), 0.5f, n);
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  }
  std::printf("%.3f %f\n", best * 1e3, d[5]);
}
"""


def cflags(tree: Path) -> list[str]:
    code = "import sys; from opkit import emulator; print(' '.join(emulator.cflags()))"
    env = dict(os.environ, PYTHONPATH=str(tree / "python"))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="the other opkit tree (DIR/python)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    from opkit.toolchain import isa
    levels = sorted({isa.baseline(), isa.host_level()})
    print(f"   before: load average {os.getloadavg()[0]:.1f}")
    trees = ([("before", args.before)] if args.before else []) + [("this tree", ROOT)]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "loop.cpp"
        src.write_text(SRC)
        for name, tree in trees:
            for lvl in levels:
                exe = Path(tmp) / "loop"
                subprocess.run(["g++", "-O2", *cflags(tree), *isa.flags(lvl), str(src), "-o", str(exe), "-lpthread"],
                               check=True)
                ms = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()[0]
                print(f"   {name:10s} {lvl:10s} Mul + Adds, 200 x 16384 floats: {ms} ms")
    print(f"   after: load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
