// IBSet / IBWait between two blocks (test_ib_sync.py). Built standalone, once per MODE.
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <chrono>
#include <cstdio>
#include <thread>
using namespace AscendC;
// MODE 0: block 0 writes data then IBSet; block 1 IBWait then reads it. MODE 1: block 1 waits, nobody sets.
// MODE 2: gmWorkspace too small. MODE 3: block 0 atomically adds 5 to data's 8 words (10 each) then IBSet; block 1
// IBWait then reads word 0 (15: the setter's atomic write landed before its flag). MODE 4: as 3, but the flag
// starts at 1, so block 0's IBSet spins; block 1 polls word 0 (up to 2 s) for the add, records it, then IBWait
// (flag 1 -> 0) releases block 0.
extern "C" __global__ __aicore__ void ib(GM_ADDR data, GM_ADDR sync, GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 32);
  LocalTensor<int32_t> ub = b.Get<int32_t>();
  GlobalTensor<int32_t> d, s, o;
  d.SetGlobalBuffer((__gm__ int32_t*)data, MODE >= 3 ? 8 : 1);
  s.SetGlobalBuffer((__gm__ int32_t*)sync, MODE == 2 ? 8 : 2 * 8 * 2 + 8);
  o.SetGlobalBuffer((__gm__ int32_t*)out, 2);
  if (GetBlockIdx() == 1) {
    if (MODE == 4) {
      int32_t seen = d.GetValue(0);
      for (int k = 0; k < 2000 && seen == 10; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        seen = d.GetValue(0);
      }
      IBWait(s, ub, 0, 1);
      o.SetValue(1, seen);
      return;
    }
    IBWait(s, ub, 0, 1);
    o.SetValue(1, d.GetValue(0) + ub.GetValue(0));
  } else if (MODE >= 3) {
    TBuf<TPosition::VECCALC> a;
    pipe.InitBuffer(a, 32);
    LocalTensor<int32_t> five = a.Get<int32_t>();
    Duplicate(five, 5, 8);
    PipeBarrier<PIPE_ALL>();
    SetAtomicAdd<int32_t>();
    DataCopy(d, five, 8);
    SetAtomicNone();
    IBSet(s, ub, 0, 1);
    o.SetValue(0, ub.GetValue(0));
  } else if (MODE != 1) {
    d.SetValue(0, 41);
    IBSet(s, ub, 0, 1);
    o.SetValue(0, ub.GetValue(0));
  }
}
int main() {
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  auto* data = (uint8_t*)AscendC::GmAlloc(32);
  auto* sync = (uint8_t*)AscendC::GmAlloc(4 * 64);
  auto* out = (uint8_t*)AscendC::GmAlloc(32);
  memset(data, 0, 32); memset(sync, 0, 4 * 64); memset(out, 0, 32);
  if (MODE >= 3) for (int i = 0; i < 8; ++i) ((int32_t*)data)[i] = 10;
  if (MODE == 4) ((int32_t*)sync)[2 * 8 * 1 + 0] = 1;  // block 0's eventID 1 flag: IBSet waits for 0
  ICPU_RUN_KF(ib, 2, data, sync, out);
  int32_t* o = (int32_t*)out; int32_t* s = (int32_t*)sync;
  std::printf("%d %d %d %d\n", o[0], o[1], s[2 * 8 * 1 + 0], ((int32_t*)data)[0]);
}
