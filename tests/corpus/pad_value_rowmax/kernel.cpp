// Row maxima of a (16, 37) float matrix: each 148-byte row comes in with DataCopyPad, padded on the right to
// 40 elements (32-byte aligned) with -FLT_MAX, so ReduceMax over the padded row needs no mask; each maximum
// lands in its own 32-byte slot (a reduction's dst must be aligned) and one DataCopyPad of 16 blocks of 4
// bytes packs them into GM (written here, in the style of public kernels that pad ragged rows).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void pad_rowmax(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kRows = 16, kCols = 37, kPadded = 40;
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> inQ;
  TBuf<TPosition::VECCALC> work, res;
  pipe.InitBuffer(inQ, 2, kPadded * sizeof(float));
  pipe.InitBuffer(work, kPadded * sizeof(float));
  pipe.InitBuffer(res, kRows * 8 * sizeof(float));
  GlobalTensor<float> xGm, outGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, kRows * kCols);
  outGm.SetGlobalBuffer((__gm__ float*)out, kRows);
  LocalTensor<float> r = res.Get<float>();
  LocalTensor<float> w = work.Get<float>();
  for (uint32_t row = 0; row < kRows; ++row) {
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopyExtParams cp{1, kCols * sizeof(float), 0, 0, 0};
    DataCopyPadExtParams<float> pad{true, 0, kPadded - kCols, -3.402823466e+38f};
    DataCopyPad(in, xGm[row * kCols], cp, pad);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    ReduceMax(r[row * 8], in, w, kPadded, false);
    inQ.FreeTensor(in);
  }
  event_t ev = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
  SetFlag<HardEvent::V_MTE3>(ev);
  WaitFlag<HardEvent::V_MTE3>(ev);
  DataCopyExtParams packed{kRows, sizeof(float), 0, 0, 0};
  DataCopyPad(outGm, r, packed);
}
