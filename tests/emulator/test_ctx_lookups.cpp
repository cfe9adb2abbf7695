// Kernel of test_ctx_lookups.py: how many times a tile's round trip looks the block context up (a thread-local
// access each, __tls_get_addr in a module). Built with OPKIT_EMU_COUNT_CTX; y[0..1] get the counts.
//   emu_ctx_round: one row in by DataCopyPad through a VECIN queue, Adds into a VECOUT queue, out by DataCopyPad,
//                  then the same with DataCopy; y[0] the look-ups of the DataCopyPad round, y[1] of the DataCopy one.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
template <bool Pad>
uint64_t round_trip(TQue<TPosition::VECIN, 1>& qin, TQue<TPosition::VECOUT, 1>& qout, GlobalTensor<float>& xg,
                    GlobalTensor<float>& yg) {
  const uint64_t before = opkit_emu::t_ctx_lookups;
  LocalTensor<float> a = qin.AllocTensor<float>();
  if constexpr (Pad) DataCopyPad(a, xg, DataCopyExtParams{1, 64 * sizeof(float), 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
  else DataCopy(a, xg, 64);
  qin.EnQue(a);
  LocalTensor<float> b = qin.DeQue<float>();
  LocalTensor<float> o = qout.AllocTensor<float>();
  Adds(o, b, 1.0f, 64);
  qout.EnQue(o);
  qin.FreeTensor(b);
  LocalTensor<float> r = qout.DeQue<float>();
  if constexpr (Pad) DataCopyPad(yg, r, DataCopyExtParams{1, 64 * sizeof(float), 0, 0, 0});
  else DataCopy(yg, r, 64);
  qout.FreeTensor(r);
  return opkit_emu::t_ctx_lookups - before;
}
}  // namespace

extern "C" __global__ __aicore__ void emu_ctx_round(GM_ADDR x, GM_ADDR y, GM_ADDR counts) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> qin;
  TQue<TPosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, 1, 256);
  pipe.InitBuffer(qout, 1, 256);
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  yg.SetGlobalBuffer((__gm__ float*)y, 64);
  const uint64_t pad = round_trip<true>(qin, qout, xg, yg);
  const uint64_t plain = round_trip<false>(qin, qout, xg, yg);
  PipeBarrier<PIPE_ALL>();  // the counts are scalar stores to GM
  auto* n = reinterpret_cast<__gm__ uint64_t*>(counts);
  n[0] = pad;
  n[1] = plain;
}
