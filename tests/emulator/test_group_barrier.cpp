// GroupBarrier between groups of vector blocks (test_group_barrier.py). Built standalone, once per MODE.
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
// 5 blocks: 0-1 arrive, 2-4 wait, for 2 rounds. Each arriver DataCopies round * 10 + idx + 1 into d[(round * 2 + idx) * 8]
// before its Arrive (an MTE3 copy: the barrier orders those, not scalar GM SetValue, which goes through the data cache); each waiter then writes the round's two values' sum plus 100 x a[round * 8] into out[idx * 2 + round] (303, then 323).
// MODE 1: block 1 never arrives (a hang). MODE 2: the workspace holds 2 lines, the barrier needs 3.
// MODE 3: a waitIndex past max(arriveSize, waitSize). MODE 4: arriveSize above GetBlockNum(). MODE 5: the UB word
// the barrier adds overwritten with 0 (the NPU's barrier never releases).
extern "C" __global__ __aicore__ void gb(GM_ADDR ws, GM_ADDR data, GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 32);
  LocalTensor<int32_t> ub = buf.Get<int32_t>();
  GlobalTensor<int32_t> d, a, e, o;
  d.SetGlobalBuffer((__gm__ int32_t*)data, 32);
  a.SetGlobalBuffer((__gm__ int32_t*)data + 32, 16);
  e.SetGlobalBuffer((__gm__ int32_t*)data + 48, 16);
  o.SetGlobalBuffer((__gm__ int32_t*)out, 16);
  GroupBarrier<PipeMode::MTE3_MODE> bar(ws, MODE == 4 ? 6 : 2, 3);
  const int64_t id = GetBlockIdx();
  if (MODE == 5) {  // a kernel tensor over the barrier's UB words, written after construction: increments of 0
    LocalTensor<int32_t> top(TPosition::VECCALC, TOTAL_UB_SIZE - 32 * 50, 8);
    top.SetValue(0, 0);
  }
  for (int round = 0; round < 2; ++round) {
    if (id < 2) {
      if (MODE == 1 && id == 1) return;
      Duplicate(ub, int32_t(round * 10 + id + 1), 8);  // copied out before Arrive: every waiter must see it
      PipeBarrier<PIPE_ALL>();
      DataCopy(d[(round * 2 + id) * 8], ub, 8);
      PipeBarrier<PIPE_ALL>();
      Duplicate(ub, int32_t(id + 1), 8);  // and an atomic add of id + 1 into a[round * 8 ..) on MTE3, as CANN's sample
      PipeBarrier<PIPE_ALL>();
      SetAtomicAdd<int32_t>();
      DataCopy(a[round * 8], ub, 8);  // a round's own 8: the next round's adds may start once the waiters have
      if (round == 0) SetAtomicNone();  // round 1 leaves it on: CANN's Arrive turns it off (below)
      PipeBarrier<PIPE_ALL>();
      bar.Arrive(id);
      if (round == 1) DataCopy(e[id * 8], ub, 8);  // a plain copy: e[id * 8] = id + 1, not 1000 + id + 1
    } else {
      bar.Wait(MODE == 3 ? 7 : id - 2);
      // CANN's Wait dccis only its counter: the waiter's scalar reads of data GM drop their cached lines first
      DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(d[round * 16]);
      DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(a[round * 8]);
      o.SetValue(id * 2 + round, d.GetValue(round * 16) + d.GetValue(round * 16 + 8) + 100 * a.GetValue(round * 8) +
                                     (bar.GetWorkspaceLen() == 1536 ? 0 : 100000));
    }
  }
}
int main() {
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  const size_t wsBytes = MODE == 2 ? 2 * 512 : 3 * 512;
  auto* ws = (uint8_t*)AscendC::GmAlloc(wsBytes);
  auto* data = (uint8_t*)AscendC::GmAlloc(256);
  auto* out = (uint8_t*)AscendC::GmAlloc(96);
  memset(ws, 0, wsBytes); memset(data, 0, 256);
  memset(out, 0, 64);
  for (int i = 48; i < 64; ++i) ((int32_t*)data)[i] = 1000;
  ICPU_RUN_KF(gb, 5, ws, data, out);
  int32_t* o = (int32_t*)out; uint32_t* w = (uint32_t*)ws;
  for (int i = 4; i < 10; ++i) std::printf("%d ", o[i]);
  // the counters after 2 rounds: arrive counters 2 * 2, wait counters 2 * 3, at 0 / 64 + i * 512
  for (int i = 0; i < 3; ++i) std::printf("%u %u ", w[i * 128], w[(64 + i * 512) / 4]);
  // e after the arrivers' plain copies past their last Arrive (GroupBarrier turned the atomic mode off)
  const int32_t* dv = (const int32_t*)data;
  std::printf("%d %d ", dv[48], dv[56]);
  // a's final GM: each round's atomic adds 1 + 2 applied once (flushed at the barrier, not again at the launch's end)
  std::printf("%d %d ", dv[32], dv[40]);
  std::printf("\n");
}
