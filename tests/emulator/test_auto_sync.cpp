// The default build models --cce-auto-sync=on (CANN's default for kernel-launch and custom-op projects): the
// compiler orders PIPE_S against V, MTE2 and MTE3 by itself, so scalar reads and writes need no flags; copies
// and vector instructions among themselves still do (opkit_emu/hazard.h). Lines `// RACE:<name>` must report.
#include "opkit_emu/pybind.h"

using namespace AscendC;

enum Scenario : int32_t { kScalarAfterVector, kScalarBeforeVector, kScalarAfterCopyIn, kCopyThenVector };

extern "C" __global__ __aicore__ void auto_sync(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bw;
  pipe.InitBuffer(ba, 1024);
  pipe.InitBuffer(bb, 1024);
  pipe.InitBuffer(bw, 1024);
  GlobalTensor<float> gx, gy;
  GlobalTensor<int32_t> gm;
  gx.SetGlobalBuffer((__gm__ float*)x, 256);
  gy.SetGlobalBuffer((__gm__ float*)y, 256);
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  LocalTensor<float> a = ba.Get<float>(), b = bb.Get<float>(), w = bw.Get<float>();
  const int32_t m = gm.GetValue(0);
  DataCopy(a, gx, 256);
  PipeBarrier<PIPE_ALL>();
  if (m == kScalarAfterVector) {
    ReduceSum(b, a, w, 256);
    gy.SetValue(0, b.GetValue(0));               // V -> S: inserted by the compiler
  } else if (m == kScalarBeforeVector) {
    a.SetValue(0, 100.0f);
    Adds(b, a, 1.0f, 256);                        // S -> V: inserted
    PipeBarrier<PIPE_ALL>();
    DataCopy(gy, b, 256);
  } else if (m == kScalarAfterCopyIn) {
    DataCopy(b, gx, 256);
    gy.SetValue(0, b.GetValue(7));               // MTE2 -> S: inserted
  } else {
    DataCopy(b, gx, 256);
    Exp(a, b, 256);  // RACE:kCopyThenVector
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, auto_sync, 3);
}
