// Gatherb (test_gatherb.py): 16 blocks of src gathered in reverse order by byte offsets (+ OFF).
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void gb(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> bs, bd, bo;
  pipe.InitBuffer(bs, 16 * 32);
  pipe.InitBuffer(bd, 16 * 32);
  pipe.InitBuffer(bo, 64);
  LocalTensor<uint32_t> s = bs.Get<uint32_t>(), d = bd.Get<uint32_t>(), o = bo.Get<uint32_t>();
  GlobalTensor<uint32_t> gx, gy;
  gx.SetGlobalBuffer((__gm__ uint32_t*)x, 128);
  gy.SetGlobalBuffer((__gm__ uint32_t*)y, 128);
  DataCopy(s, gx, 128);
  Duplicate(d, 0u, 128);
  for (int k = 0; k < 16; ++k) o.SetValue(k, (15 - k) * 32 + OFF);   // blocks in reverse
  PipeBarrier<PIPE_ALL>();
  Gatherb(d, s, o, 2, GatherRepeatParams(0, 8));
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, d, 128);
}
int main() {
  auto* x = (uint32_t*)GmAlloc(512);
  auto* y = (uint32_t*)GmAlloc(512);
  for (int i = 0; i < 128; ++i) { x[i] = i; y[i] = 0; }
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(gb, 1, (uint8_t*)x, (uint8_t*)y);
  std::printf("%u %u %u\n", y[0], y[8], y[127]);
}
