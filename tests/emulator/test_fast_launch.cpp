// Kernels of test_fast_launch.py: a launch with OPKIT_LAUNCH_FAST skips the per-call rules (docs/emulator.md
// "Checked once, then fast") but keeps the data path, the queue state and the GM bounds.
//   emu_fast_leak:  copies a buffer it never wrote to GM when tiling[0] != 0 (ub-uninitialized when checked;
//                   fast, the bytes are whatever UB held, 0x5A with OPKIT_LAUNCH_ALT_FILL);
//   emu_fast_race:  a vector Adds on data MTE2 copied in with nothing ordering them (pipe-race when checked);
//   emu_fast_oob:   copies one row past the end of GM (gm-bounds, checked or fast).
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void emu_fast_leak(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<float> t = buf.Get<float>();
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  yg.SetGlobalBuffer((__gm__ float*)y, 64);
  const bool leak = *reinterpret_cast<__gm__ uint32_t*>(tiling) != 0;
  if (!leak) DataCopy(t, xg, 64);
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, t, 64);
}

extern "C" __global__ __aicore__ void emu_fast_race(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<float> t = buf.Get<float>();
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  yg.SetGlobalBuffer((__gm__ float*)y, 64);
  DataCopy(t, xg, 64);
  Adds(t, t, 1.0f, 64);   // no MTE2 -> V ordering: a race on the NPU
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, t, 64);
}

extern "C" __global__ __aicore__ void emu_fast_oob(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 512);
  LocalTensor<float> t = buf.Get<float>();
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 128);
  yg.SetGlobalBuffer((__gm__ float*)y, 64);
  DataCopy(t, xg, 128);   // x holds 64 floats
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, t, 64);
}
