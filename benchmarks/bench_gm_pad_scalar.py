"""GM reads inside a tensor's data -- GlobalTensor::GetValue, or DataCopy GM->UB loads with --load -- in a launch whose
output has padding (data_bytes 432 of a 480-byte buffer) against one without (no data_bytes: all of it data)
(opkit_emu/gm_pad.h; docs/emulator.md "Data extent", its cost). Padding nobody wrote is poison from a checked launch's
start (gm_pad_begin), so a launch with padding pays the region lookup on every such read; one without pays one relaxed
atomic load while no other launch in the process has padding. Each of `--blocks` blocks reads `--reps` halves with
GetValue (or `--reps` 32-byte blocks with DataCopy), all inside the data. (Before gm_pad_scalar returned early for an
access touching no padding, every such read took the process-wide lock.)

    PYTHONPATH=python python benchmarks/bench_gm_pad_scalar.py [--load] [--blocks 8 --reps 2000000 --repeat 5]

Prints the median wall time of each launch kind, alternated in one run, and their ratio (padding / none)."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from opkit.emulator.abi import KernelModule  # noqa: E402
from opkit.emulator.modules import compile_module  # noqa: E402

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void bench_gm_pad_scalar(GM_ADDR y, GM_ADDR tiling) {
  const uint32_t load = reinterpret_cast<__gm__ uint32_t*>(tiling)[0];
  const uint32_t reps = reinterpret_cast<__gm__ uint32_t*>(tiling)[1];
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 512);
  LocalTensor<half> t = buf.Get<half>();
  GlobalTensor<half> yg;
  yg.SetGlobalBuffer((__gm__ half*)y, 240);
  if (load) {
    for (uint32_t i = 0; i < reps; ++i) DataCopy(t, yg[(i % 13) * 16], 16);  // all inside the data
    return;
  }
  float s = 0;
  for (uint32_t i = 0; i < reps; ++i) s += static_cast<float>(yg.GetValue(i % 200));  // all inside the data
  if (s < -1) yg.SetValue(0, half(s));
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", action="store_true", help="DataCopy GM->UB loads instead of GetValue")
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "bench_gm_pad_scalar.cpp"
        src.write_text(KERNEL)
        mod = KernelModule(compile_module(src, "bench_gm_pad_scalar", 2, Path(d) / "out", opt="-O2"))
        times: dict[int, list[float]] = {0: [], 1: []}
        for _ in range(a.repeat + 1):            # the first round is a warm-up (thread start, page faults)
            for pad in (0, 1):
                y = np.zeros(480, np.uint8)
                t = time.perf_counter()
                mod.launch([y, np.array([int(a.load), a.reps], np.uint32)], a.blocks,
                           data_bytes=[432 if pad else None, None])
                times[pad].append(time.perf_counter() - t)
    none, pad = (statistics.median(times[k][1:]) for k in (0, 1))
    what = "DataCopy loads" if a.load else "GetValue"
    print(f"{a.blocks} blocks x {a.reps} {what} inside the data, median of {a.repeat}:")
    print(f"  launch without padding  {none:.3f} s")
    print(f"  launch with padding     {pad:.3f} s   ratio {pad / none:.2f}")


if __name__ == "__main__":
    main()
