// The advanced Transpose (lib/transpose/confusion_transpose.h): scenes 1 and 2 (TRANSPOSE_NZ2ND_0213 /
// TRANSPOSE_NZ2NZ_0213), half and float, with and without sharedTmpBuffer, on the tiling the host stand-in's
// GetTransposeTilingInfo fills (test_confusion_transpose.py).
#include "opkit_emu/pybind.h"
#include "adv_api/transpose/kernel_operator_confusion_transpose_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct CtCase {
  uint32_t isHalf, type, tmp, n;  // tmp: sharedTmpBuffer bytes, 0 = the form without it; n: elements in and out
  ConfusionTransposeTiling tiling;
};

template <class T>
__aicore__ inline void call(const CtCase& t, const LocalTensor<T>& y, const LocalTensor<T>& x,
                            const LocalTensor<uint8_t>& tmp) {
  CtCase c = t;
  const TransposeType type = static_cast<TransposeType>(t.type);
  if (t.tmp) Transpose(y, x, tmp, type, c.tiling);  // CT:call
  else Transpose(y, x, type, c.tiling);
}

// in: n floats; out: n floats
extern "C" __global__ __aicore__ void ct_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CtCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.n;
  TBuf<TPosition::VECCALC> bx, by, hx, hy, bt;
  pipe.InitBuffer(bx, n * 4);
  pipe.InitBuffer(by, n * 4);
  pipe.InitBuffer(hx, n * 2);
  pipe.InitBuffer(hy, n * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, n);
  go.SetGlobalBuffer((__gm__ float*)out, n);
  LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, n);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> xh = hx.Get<half>(), yh = hy.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
    call<half>(t, yh, xh, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(y, yh, RoundMode::CAST_NONE, n);
  } else {
    call<float>(t, y, x, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, y, n);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, ct_call, 3);
}
