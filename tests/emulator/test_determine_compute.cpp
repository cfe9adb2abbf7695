// InitDetermineComputeWorkspace / WaitPreBlock / NotifyNextBlock (test_determine_compute.py): each of 4 blocks
// appends its blockIdx to a GM log between WaitPreBlock and NotifyNextBlock, two rounds; MODE 1: block 2 skips its
// NotifyNextBlock in round 0 (the blocks after it wait forever on the NPU); MODE 2: gmWorkspace set without a size
// (CANN's sequential_block_sync sample) and a UB tile loaded before WaitPreBlock, stored after it with no flag of its
// own (ordered by the call's PipeBarrier<PIPE_ALL>, as in that sample); MODE 3: the same over a GM buffer of 3 blocks' 32 bytes, short of 4;
// MODE 4: each block logs extra[0] instead of its blockIdx, then atomically adds blockIdx + 1 to extra[0..8) before
// its NotifyNextBlock (the next block reads the running sum: 0 1 3 6, then 10 11 13 16).
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void det(GM_ADDR ws, GM_ADDR log, GM_ADDR extra) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 4 * 32 + 32);
  LocalTensor<int32_t> ub = b.Get<int32_t>();
  GlobalTensor<int32_t> g, l;
#if MODE == 2 || MODE == 3
  g.SetGlobalBuffer((__gm__ int32_t*)ws);  // no size: the workspace is what its GM buffer holds
#else
  g.SetGlobalBuffer((__gm__ int32_t*)ws, 4 * 8);
#endif
  l.SetGlobalBuffer((__gm__ int32_t*)log, 9);
  InitDetermineComputeWorkspace(g, ub);
  SyncAll();
  TBuf<TPosition::VECCALC> bx;
  pipe.InitBuffer(bx, 32);
  LocalTensor<int32_t> x = bx.Get<int32_t>();
  GlobalTensor<int32_t> e;
  e.SetGlobalBuffer((__gm__ int32_t*)extra + 8 * GetBlockIdx(), 8);
  for (int round = 0; round < 2; ++round) {
    if (MODE == 2) DataCopy(x, e, 8);  // MTE2 writes x ...
    WaitPreBlock(g, ub);
    if (MODE == 2) DataCopy(e, x, 8);  // ... MTE3 reads it: ordered by WaitPreBlock's PipeBarrier<PIPE_ALL> alone
    const int32_t n = l.GetValue(8);
#if MODE == 4
    GlobalTensor<int32_t> acc;
    acc.SetGlobalBuffer((__gm__ int32_t*)extra, 8);
    l.SetValue(n, acc.GetValue(0));
    Duplicate(x, static_cast<int32_t>(GetBlockIdx() + 1), 8);
    PipeBarrier<PIPE_ALL>();
    SetAtomicAdd<int32_t>();
    DataCopy(acc, x, 8);
    SetAtomicNone();
#else
    l.SetValue(n, static_cast<int32_t>(GetBlockIdx()));
#endif
    l.SetValue(8, n + 1);
    if (!(MODE == 1 && round == 0 && GetBlockIdx() == 2)) NotifyNextBlock(g, ub);
  }
}
int main() {
  SetKernelMode(KernelMode::AIV_MODE);
  auto* ws = (int32_t*)GmAlloc(MODE == 3 ? 3 * 32 : 4 * 32);
  auto* log = (int32_t*)GmAlloc(64);
  for (int i = 0; i < 32; ++i) ws[i] = 0;
  for (int i = 0; i < 16; ++i) log[i] = 0;
  auto* extra = (int32_t*)GmAlloc(4 * 32);
  for (int i = 0; i < 32; ++i) extra[i] = 0;
  ICPU_RUN_KF(det, 4, (uint8_t*)ws, (uint8_t*)log, (uint8_t*)extra);
  for (int i = 0; i < 8; ++i) std::printf("%d ", log[i]);
  std::printf("\n");
}
