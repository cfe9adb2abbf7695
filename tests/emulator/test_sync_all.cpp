// SyncAll and the atomic GM writes before it (sync_all.h); test_sync_all.py checks them.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// The multi-core reduction CANN kernels use: every block atomically writes its 64 floats x[idx * 64 ..) into the
// workspace ws, SyncAll, then block 0 copies ws to out. mode[0]: 0 SetAtomicAdd, 1 SetAtomicMax, 2 SetAtomicAdd
// and block 2 (of 3 or more) writes past ws before its SyncAll (gm-bounds).
extern "C" __global__ __aicore__ void reduce_ws(GM_ADDR x, GM_ADDR ws, GM_ADDR out, GM_ADDR mode) {
  constexpr int32_t L = 64;
  const int64_t n = GetBlockNum(), i = GetBlockIdx();
  const int32_t md = ((__gm__ int32_t*)mode)[0];
  GlobalTensor<float> xg, wg, og;
  xg.SetGlobalBuffer((__gm__ float*)x, L * n);
  wg.SetGlobalBuffer((__gm__ float*)ws, L);
  og.SetGlobalBuffer((__gm__ float*)out, L);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, L * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xg[L * i], L);
  PipeBarrier<PIPE_ALL>();
  if (md == 1) SetAtomicMax<float>();
  else SetAtomicAdd<float>();
  DataCopy(wg, t, L);
  SetAtomicNone();
  if (md == 2 && i == 2) wg.SetValue(L, 0.0f);  // past the end: gm-bounds
  SyncAll();
  if (i != 0) return;
  DataCopy(t, wg, L);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og, t, L);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, reduce_ws, 4);
}
