"""opkit_emu/host_math.h: the emulator's headers do their math without <cmath>, so with -DOPKIT_EMU_NO_CMATH (which
leaves out the <cmath> kernel_operator.h gives kernels by default, as CANN's CPU-debug build does) a kernel whose entry
carries a C math function's name -- msopgen names `extern "C" ... void erf(...)` after the op Erf -- compiles and
runs, and every result stays the C library's bit for bit (test_host_math.cpp)."""
from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def test_host_math_equals_the_c_library_bit_for_bit(gxx, tmp_path):
    r = gxx(HERE / "test_host_math.cpp", tmp_path / "hm", ["-O2"])
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "hm")], capture_output=True, text=True)
    assert run.returncode == 0 and "mismatches 0" in run.stdout, run.stdout


# Entries named like C double functions, each calling the API that uses the emulator's math of that name.
KERNEL = r'''
#include "kernel_operator.h"
#include "lib/math/erf.h"
#include "tikicpulib.h"
using namespace AscendC;
template <class F>
static void body(GM_ADDR x, GM_ADDR y, F f) {
  TPipe pipe; TBuf<TPosition::VECCALC> b; pipe.InitBuffer(b, 3 * 256);
  GlobalTensor<float> gx, gy; gx.SetGlobalBuffer((__gm__ float*)x, 64); gy.SetGlobalBuffer((__gm__ float*)y, 64);
  LocalTensor<float> t = b.Get<float>(), u = t[64];
  LocalTensor<half> h = t[128].ReinterpretCast<half>();
  DataCopy(t, gx, 64);
  SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);
  f(t, u, h);
  SetFlag<HardEvent::V_MTE3>(0); WaitFlag<HardEvent::V_MTE3>(0);
  DataCopy(gy, u, 64);
}
extern "C" __global__ __aicore__ void round(GM_ADDR x, GM_ADDR y) {
  body(x, y, [](auto t, auto u, auto h) { Cast(h, t, RoundMode::CAST_ROUND, 64); PipeBarrier<PIPE_V>();
                                          Cast(u, h, RoundMode::CAST_NONE, 64); });
}
extern "C" __global__ __aicore__ void nearbyint(GM_ADDR x, GM_ADDR y) {
  body(x, y, [](auto t, auto u, auto h) { Cast(h, t, RoundMode::CAST_RINT, 64); PipeBarrier<PIPE_V>();
                                          Cast(u, h, RoundMode::CAST_NONE, 64); });
}
extern "C" __global__ __aicore__ void trunc(GM_ADDR x, GM_ADDR y) {
  body(x, y, [](auto t, auto u, auto h) { Cast(h, t, RoundMode::CAST_ODD, 64); PipeBarrier<PIPE_V>();
                                          Cast(u, h, RoundMode::CAST_NONE, 64); });
}
extern "C" __global__ __aicore__ void erf(GM_ADDR x, GM_ADDR y) {
  body(x, y, [](auto t, auto u, auto) { Erf(u, t, 64u); });
}
int main() {
  float* x = (float*)AscendC::GmAlloc(256);
  float* z = (float*)AscendC::GmAlloc(256);
  float* y = (float*)AscendC::GmAlloc(256);
  float* w = (float*)AscendC::GmAlloc(256);
  for (int i = 0; i < 64; ++i) w[i] = (i % 2 ? -1.0f : 1.0f) * (1024.0f + i * 0.25f);  // .0 .25 .5 .75, both signs
  for (int i = 0; i < 64; ++i) x[i] = 1024.5f + i;       // half ties: the ulp of half is 1 in [1024, 2048)
  for (int i = 0; i < 64; ++i) z[i] = (i - 32) / 10.0f;
  ICPU_RUN_KF(round, 1, (uint8_t*)x, (uint8_t*)y);
  for (int i = 0; i < 64; ++i) printf("%a ", y[i]);
  printf("\n");
  ICPU_RUN_KF(nearbyint, 1, (uint8_t*)x, (uint8_t*)y);
  for (int i = 0; i < 64; ++i) printf("%a ", y[i]);
  printf("\n");
  ICPU_RUN_KF(trunc, 1, (uint8_t*)w, (uint8_t*)y);
  for (int i = 0; i < 64; ++i) printf("%a ", y[i]);
  printf("\n");
  ICPU_RUN_KF(erf, 1, (uint8_t*)z, (uint8_t*)y);
  for (int i = 0; i < 64; ++i) printf("%a ", y[i]);
  printf("\n");
}
'''


def test_kernel_entries_named_like_c_math_functions_compile_and_run(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text(KERNEL)
    r = gxx(src, tmp_path / "k", ["-O2", "-Werror=builtin-declaration-mismatch", "-DOPKIT_EMU_NO_CMATH"])
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "k")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [np.array([float.fromhex(v) for v in line.split()]) for line in run.stdout.splitlines()]
    x = 1024.5 + np.arange(64)
    assert np.array_equal(rows[0], x + 0.5)                  # CAST_ROUND: ties away from zero
    assert np.array_equal(rows[1], np.round(x))              # CAST_RINT: ties to even (numpy rounds half to even)
    w = np.where(np.arange(64) % 2, -1.0, 1.0) * (1024 + np.arange(64) * 0.25)
    t = np.trunc(w)
    assert np.array_equal(rows[2], np.where((t != w) & (t % 2 == 0), t + np.sign(w), t))  # CAST_ODD: round to odd
    z = (np.arange(64, dtype=np.float32) - 32) / np.float32(10)
    want = np.array([math.erf(v) for v in z.astype(np.float64)])
    assert np.abs(rows[3] - want).max() < 1e-6               # erff, float32 against float64
