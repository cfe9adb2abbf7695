"""run-asc's never-written tracking (opkit_emu/gm_pad.h gm_data_*; docs/emulator.md "Data extent", its cost) while
the process-wide gate is up: a workspace w the program never writes keeps `unwritten_live` at 1, so every kernel
store, GM->UB load and scalar access on an aclrtMalloc buffer looks its bytes up. Each of --blocks blocks copies its
slice of x (written) into UB, adds 1 and stores it into y (memset first) --reps times, then spins --spins reads of a
memset flag with ReadGmByPassDCache. The program times its own launch (std::chrono, compile excluded).

    PYTHONPATH=python python benchmarks/bench_run_asc_lock.py --before /tmp/before/python [--rounds 2]

`--before` is another tree's python/ folder (git archive of an earlier commit); both sides run alternately in one
run, each with its own OPKIT_CACHE_DIR. Prints each side's launch times (ms) and the best of each."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = r"""
#include <chrono>
#include <cstdint>
#include <cstdio>
#include "acl/acl.h"
#include "kernel_operator.h"

constexpr uint32_t N = 2048, BLOCKS = %(blocks)d, REPS = %(reps)d, SPINS = %(spins)d;

__global__ __vector__ void work(GM_ADDR x, GM_ADDR y, GM_ADDR flag) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, N * sizeof(float));
  AscendC::GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + AscendC::GetBlockIdx() * N, N);
  yGm.SetGlobalBuffer((__gm__ float*)y + AscendC::GetBlockIdx() * N, N);
  AscendC::LocalTensor<float> t = buf.Get<float>();
  for (uint32_t r = 0; r < REPS; ++r) {
    AscendC::DataCopy(t, xGm, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Adds(t, t, 1.0f, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, N);
    AscendC::PipeBarrier<PIPE_ALL>();
  }
  int32_t s = 0;
  for (uint32_t i = 0; i < SPINS; ++i) s += AscendC::ReadGmByPassDCache((__gm__ int32_t*)flag);
  if (s != 0) AscendC::printf("flag %%d\n", s);
}

int main() {
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  static float x[N * BLOCKS];
  for (uint32_t i = 0; i < N * BLOCKS; ++i) x[i] = 0.25f * (i %% 64);
  uint8_t *xDev, *yDev, *fDev, *wDev;
  aclrtMalloc((void**)&xDev, sizeof x, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc((void**)&yDev, sizeof x, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc((void**)&fDev, 32, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc((void**)&wDev, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST);   // never written: keeps the gate up
  aclrtMemcpy(xDev, sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemset(yDev, sizeof x, 0, sizeof x);
  aclrtMemset(fDev, 32, 0, 32);
  const auto t0 = std::chrono::steady_clock::now();
  work<<<BLOCKS, nullptr, stream>>>(xDev, yDev, fDev);
  aclrtSynchronizeStream(stream);
  const auto t1 = std::chrono::steady_clock::now();
  std::printf("elapsed_ms=%%.1f\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
  aclrtFree(xDev);
  aclrtFree(yDev);
  aclrtFree(fDev);
  aclrtFree(wDev);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
"""


def run(python_dir: str, cache: str, src: Path) -> float:
    env = dict(os.environ, PYTHONPATH=python_dir, OPKIT_CACHE_DIR=cache)
    r = subprocess.run([sys.executable, "-m", "opkit", "run-asc", str(src)], capture_output=True, text=True, env=env,
                       timeout=1200)
    m = re.search(r"elapsed_ms=([0-9.]+)", r.stdout)
    if r.returncode != 0 or not m:
        raise SystemExit(f"run-asc failed ({python_dir}):\n{r.stdout}\n{r.stderr}")
    return float(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the other tree's python/ folder")
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--spins", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bench_run_asc_lock.asc"
        src.write_text(PROGRAM % {"blocks": a.blocks, "reps": a.reps, "spins": a.spins})
        sides = {"before": (a.before, f"{tmp}/cache_before"), "this": (str(ROOT / "python"), f"{tmp}/cache_this")}
        times: dict[str, list[float]] = {k: [] for k in sides}
        for name, (py, cache) in sides.items():   # warm-up: the compiles
            run(py, cache, src)
        for _ in range(a.rounds):
            for name, (py, cache) in sides.items():
                times[name].append(run(py, cache, src))
        for name, ts in times.items():
            print(f"{name}: launch ms {' '.join(f'{t:.1f}' for t in ts)}  best {min(ts):.1f}")


if __name__ == "__main__":
    main()
