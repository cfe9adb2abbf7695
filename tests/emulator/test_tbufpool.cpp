// TBufPool (test_tbufpool.py): two pools sharing one range; OVER: a buffer past the pool; STALE: a read after Reset.
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
// Two pools sharing one range (the page's scenario): stage 1 in pool 1, Reset, stage 2 in pool 2 on the same UB.
extern "C" __global__ __aicore__ void bp(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBufPool<TPosition::VECCALC> p1, p2;
  TQue<TPosition::VECIN, 1> qin;
  TBuf<TPosition::VECCALC> t1, t2;
  pipe.InitBufPool(p1, 128);
  pipe.InitBufPool(p2, 128, p1);
  p1.InitBuffer(qin, 1, 64);
  p1.InitBuffer(t1, 64);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 16);
  gy.SetGlobalBuffer((__gm__ float*)y, 16);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, gx, 16);
  qin.EnQue(a);
  a = qin.DeQue<float>();
  LocalTensor<float> b = t1.Get<float>();
  Muls(b, a, 2.0f, 16);
  qin.FreeTensor(a);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, b, 16);
  PipeBarrier<PIPE_ALL>();
  p1.Reset();
  p2.InitBuffer(t2, OVER ? 256 : 128);
  LocalTensor<float> c = t2.Get<float>();
#if STALE
  DataCopy(gy, b, 16);   // p1's data after Reset: undefined (another pool shares the range)
#endif
  Duplicate(c, 1.0f, 32);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy[8], c, 8);
}
int main() {
  SetKernelMode(KernelMode::AIV_MODE);
  auto* x = (float*)GmAlloc(64);
  auto* y = (float*)GmAlloc(64);
  for (int i = 0; i < 16; ++i) { x[i] = i; y[i] = 0; }
  ICPU_RUN_KF(bp, 1, (uint8_t*)x, (uint8_t*)y);
  std::printf("%g %g %g\n", y[1], y[7], y[8]);
}
