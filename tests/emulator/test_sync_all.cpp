// SyncAll and the atomic GM writes before it (sync_all.h); test_sync_all.py checks them.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// The multi-core reduction CANN kernels use: every block atomically writes its 64 floats x[idx * 64 ..) into the
// workspace ws, SyncAll, then block 0 copies ws to out. mode[0]: 0 SetAtomicAdd, 1 SetAtomicMax, 2 SetAtomicAdd
// and block 2 (of 3 or more) writes past ws before its SyncAll (gm-bounds), 3 SetAtomicAdd and the older
// SyncAll(gmWorkspace, ubWorkspace, usedCores) form. Low blocks do busy work first, so they arrive last.
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
  TBuf<TPosition::VECCALC> busy;
  pipe.InitBuffer(busy, L * sizeof(float));
  LocalTensor<float> scratch = busy.Get<float>();
  Duplicate(scratch, 0.0f, L);
  for (int64_t k = 0; k < (n - 1 - i) * 2000; ++k) Adds(scratch, scratch, 1.0f, L);
  DataCopy(t, xg[L * i], L);
  PipeBarrier<PIPE_ALL>();
  if (md == 1) SetAtomicMax<float>();
  else SetAtomicAdd<float>();
  DataCopy(wg, t, L);  // t is read by MTE3 here and written by MTE2 below: SyncAll's own PipeBarrier orders them
  SetAtomicNone();
  if (md == 2 && i == 2) wg.SetValue(L, 0.0f);  // past the end: gm-bounds
  if (md == 3) {
    GlobalTensor<int32_t> gw;
    gw.SetGlobalBuffer((__gm__ int32_t*)ws, L);
    SyncAll(gw, scratch.ReinterpretCast<int32_t>(), 0);
  } else {
    SyncAll();
  }
  if (i != 0) return;
  DataCopy(t, wg, L);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og, t, L);
}

// The same reduction over a GroupBarrier: blocks 0 .. n-2 atomically add their rows into ws and Arrive, block n-1
// Waits and copies ws to out. gbws: the barrier's zeroed workspace, (n - 1) x 512 bytes.
extern "C" __global__ __aicore__ void reduce_gb(GM_ADDR x, GM_ADDR ws, GM_ADDR gbws, GM_ADDR out) {
  constexpr int32_t L = 64;
  const int64_t n = GetBlockNum(), i = GetBlockIdx();
  GlobalTensor<float> xg, wg, og;
  xg.SetGlobalBuffer((__gm__ float*)x, L * n);
  wg.SetGlobalBuffer((__gm__ float*)ws, L);
  og.SetGlobalBuffer((__gm__ float*)out, L);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  TBuf<TPosition::VECCALC> buf2;
  pipe.InitBuffer(buf, L * sizeof(float));
  pipe.InitBuffer(buf2, L * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  GroupBarrier<PipeMode::MTE3_MODE> bar(gbws, uint32_t(n - 1), 1);
  if (i < n - 1) {
    DataCopy(t, xg[L * i], L);
    PipeBarrier<PIPE_ALL>();
    // busy work that makes the low blocks arrive last (the host threads' order then differs from block order)
    LocalTensor<float> scratch = buf2.Get<float>();
    Duplicate(scratch, 0.0f, L);
    for (int64_t k = 0; k < (n - 1 - i) * 3000; ++k) Adds(scratch, scratch, 1.0f, L);
    PipeBarrier<PIPE_ALL>();
    SetAtomicAdd<float>();
    DataCopy(wg, t, L);
    PipeBarrier<PIPE_ALL>();
    bar.Arrive(uint32_t(i));
    return;
  }
  bar.Wait(0);
  DataCopy(t, wg, L);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og, t, L);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, reduce_ws, 4);
  OPKIT_EMU_PY_KERNEL(m, reduce_gb, 4);
}
