"""An unsupported Cast RoundMode is refused when the Cast runs, not when the kernel compiles (cast.h): CANN's
compiler builds the call and its CPU-debug library asserts only on execution (asc-devkit@82b89a15
impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h:590-599), and CANN's kernels keep such calls on paths the
A2 tiling never selects (ops-nn norm/rms_norm: a float -> bfloat16_t CAST_NONE for 910A keys only)."""
from __future__ import annotations

import subprocess

PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y, GM_ADDR flag) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> fb, bb;
  pipe.InitBuffer(fb, 256);
  pipe.InitBuffer(bb, 256);
  GlobalTensor<float> gx;
  gx.SetGlobalBuffer((__gm__ float*)x, 64);
  GlobalTensor<bfloat16_t> gy;
  gy.SetGlobalBuffer((__gm__ bfloat16_t*)y, 64);
  LocalTensor<float> f = fb.Get<float>();
  LocalTensor<bfloat16_t> b = bb.Get<bfloat16_t>();
  DataCopy(f, gx, 64);
  SetFlag<HardEvent::MTE2_V>(0);
  WaitFlag<HardEvent::MTE2_V>(0);
  if (*(__gm__ int32_t*)flag) Cast(b, f, RoundMode::CAST_NONE, 64);   // not on the A2: a 910A-only path
  else Cast(b, f, RoundMode::CAST_RINT, 64);
  SetFlag<HardEvent::V_MTE3>(0);
  WaitFlag<HardEvent::V_MTE3>(0);
  DataCopy(gy, b, 64);
}
int main(int argc, char**) {
  auto* x = (uint8_t*)GmAlloc(256);
  auto* y = (uint8_t*)GmAlloc(128);
  auto* flag = (uint8_t*)GmAlloc(32);
  for (int i = 0; i < 64; ++i) ((float*)x)[i] = 1.5f;
  *(int32_t*)flag = argc > 1;
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(k, 1, x, y, flag);
  std::printf("%g\n", float(((bfloat16_t*)y)[63]));
  return 0;
}
'''


def test_cast_mode_at_run(gxx, tmp_path):
    src = tmp_path / "cast_mode.cpp"
    src.write_text(PROGRAM)
    r = gxx(src, tmp_path / "prog")
    assert r.returncode == 0, r.stderr[-3000:]      # the unsupported mode on an untaken path compiles
    ok = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.split() == ["1.5"], ok.stdout + ok.stderr
    bad = subprocess.run([str(tmp_path / "prog"), "unsupported"], capture_output=True, text=True)
    assert bad.returncode != 0 and "dtype-unsupported" in bad.stdout + bad.stderr, bad.stdout + bad.stderr
    assert "CAST_NONE is not supported for Cast float -> bfloat16_t" in bad.stdout + bad.stderr
