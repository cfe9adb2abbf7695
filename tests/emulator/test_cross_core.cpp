// CrossCoreSetFlag / CrossCoreWaitFlag mode 0 (sync_all.h) and TPipe copy-assignment (tpipe.h).
// test_cross_core.py checks them.
#include "opkit_emu/pybind.h"

#include <chrono>
#include <thread>
using namespace AscendC;

// out: 16 int32 slots per block (64 bytes). Each block writes idx + 1 into its slot, sets the flag, waits, then
// writes the sum of every block's slot into its second slot. skip[0] = 1: block 0 never sets the flag.
extern "C" __global__ __aicore__ void cross_core(GM_ADDR out, GM_ADDR skip) {
  GlobalTensor<int32_t> g;
  const int64_t n = GetBlockNum(), i = GetBlockIdx();
  g.SetGlobalBuffer((__gm__ int32_t*)out, 16 * n);
  g.SetValue(16 * i, static_cast<int32_t>(i + 1));
  if (!(((__gm__ uint32_t*)skip)[0] == 1 && i == 0)) CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV_ONLY_ALL);
  CrossCoreWaitFlag(SYNC_AIV_ONLY_ALL);
  int32_t sum = 0;
  for (int64_t b = 0; b < n; ++b) sum += g.GetValue(16 * b);
  g.SetValue(16 * i + 8, sum);
}

// acc: 8 int32 (the host sets 100). Each block atomically adds blockIdx + 1 to them (SetAtomicAdd<int32_t> and a
// DataCopy: deferred on the emulator), sets the flag, waits for every block's, then reads acc[0] into out[blockIdx]
// -- CANN's SyncAll written by hand; each block's copy is in GM once it sets its flag, so all see the sum.
extern "C" __global__ __aicore__ void cross_core_atomic(GM_ADDR acc, GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 32);
  LocalTensor<int32_t> t = b.Get<int32_t>();
  GlobalTensor<int32_t> a, o;
  const int64_t i = GetBlockIdx();
  a.SetGlobalBuffer((__gm__ int32_t*)acc, 8);
  o.SetGlobalBuffer((__gm__ int32_t*)out, GetBlockNum());
  Duplicate(t, static_cast<int32_t>(i + 1), 8);
  PipeBarrier<PIPE_ALL>();
  SetAtomicAdd<int32_t>();
  DataCopy(a, t, 8);
  SetAtomicNone();
  CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV_ONLY_ALL);
  CrossCoreWaitFlag(SYNC_AIV_ONLY_ALL);
  o.SetValue(i, a.GetValue(0));
}

// Float atomic adds whose sum depends on order: block i sleeps (blocks - 1 - i) * 15 ms, so the host threads reach
// CrossCoreSetFlag in reverse block order, adds vals[i] into acc, sets (on PIPE_MTE3, or PIPE_V in cross_core_pipe_v),
// waits, reads acc[0].
template <pipe_t kPipe>
__aicore__ inline void cross_core_float_sum(GM_ADDR acc, GM_ADDR vals, GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 32);
  LocalTensor<float> t = b.Get<float>();
  GlobalTensor<float> a, v, o;
  const int64_t i = GetBlockIdx();
  a.SetGlobalBuffer((__gm__ float*)acc, 8);
  v.SetGlobalBuffer((__gm__ float*)vals, GetBlockNum());
  o.SetGlobalBuffer((__gm__ float*)out, GetBlockNum());
  std::this_thread::sleep_for(std::chrono::milliseconds(15 * (GetBlockNum() - 1 - i)));
  Duplicate(t, v.GetValue(i), 8);
  PipeBarrier<PIPE_ALL>();
  SetAtomicAdd<float>();
  DataCopy(a, t, 8);
  SetAtomicNone();
  CrossCoreSetFlag<0x0, kPipe>(SYNC_AIV_ONLY_ALL);
  CrossCoreWaitFlag(SYNC_AIV_ONLY_ALL);
  o.SetValue(i, a.GetValue(0));
}
extern "C" __global__ __aicore__ void cross_core_order(GM_ADDR acc, GM_ADDR vals, GM_ADDR out) {
  cross_core_float_sum<PIPE_MTE3>(acc, vals, out);
}
extern "C" __global__ __aicore__ void cross_core_pipe_v(GM_ADDR acc, GM_ADDR vals, GM_ADDR out) {
  cross_core_float_sum<PIPE_V>(acc, vals, out);
}

// Block 0 atomically adds 5 into acc and sets flag 3 on PIPE_MTE3; block 1 adds 7 and never sets: the round stays
// incomplete and nobody waits.
extern "C" __global__ __aicore__ void cross_core_partial(GM_ADDR acc) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 32);
  LocalTensor<int32_t> t = b.Get<int32_t>();
  GlobalTensor<int32_t> a;
  a.SetGlobalBuffer((__gm__ int32_t*)acc, 8);
  Duplicate(t, GetBlockIdx() == 0 ? 5 : 7, 8);
  PipeBarrier<PIPE_ALL>();
  SetAtomicAdd<int32_t>();
  DataCopy(a, t, 8);
  SetAtomicNone();
  if (GetBlockIdx() == 0) CrossCoreSetFlag<0x0, PIPE_MTE3>(3);
}

// A kernel class holding its own TPipe, assigned the entry's (as ops-nn norm/layer_norm_grad_v3 does).
class CopyPipeOp {
 public:
  void Init(GM_ADDR x, GM_ADDR y, TPipe& pipeIn) {
    pipe = pipeIn;
    pipe.InitBuffer(buf, 256);
    xg.SetGlobalBuffer((__gm__ float*)x, 64);
    yg.SetGlobalBuffer((__gm__ float*)y, 72);
  }
  void Process() {
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, xg, 64);
    PipeBarrier<PIPE_ALL>();
    Muls(t, t, 3.0f, 64);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, t, 64);
    PipeBarrier<PIPE_ALL>();
    yg.SetValue(64, GetTPipePtr() == &pipe ? 1.0f : 0.0f);
  }
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  GlobalTensor<float> xg, yg;
};

// y: [0, 64) x * 3 through a buffer the copied pipe planned, [64] 1 when GetTPipePtr is the copy.
extern "C" __global__ __aicore__ void pipe_copy(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  CopyPipeOp op;
  op.Init(x, y, pipe);
  op.Process();
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, cross_core, 2);
  OPKIT_EMU_PY_KERNEL(m, pipe_copy, 2);
  OPKIT_EMU_PY_KERNEL(m, cross_core_atomic, 2);
  OPKIT_EMU_PY_KERNEL(m, cross_core_order, 3);
  OPKIT_EMU_PY_KERNEL(m, cross_core_pipe_v, 3);
  OPKIT_EMU_PY_KERNEL(m, cross_core_partial, 1);
}
