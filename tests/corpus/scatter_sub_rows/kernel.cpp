// ScatterSub on rows: out = var, then out[idx[i]] -= updates[i] for 8 distinct row indices of a (16, 40) float
// var. A2 has no Scatter instruction (Scatter(ISASI).md: Atlas A2 "不支持"), so, as public ScatterSub /
// ScatterElements kernels do, the kernel reads each index on the scalar unit from GM and moves whole rows:
// var copied through a TQueBind<VECIN, VECOUT> (MTE2 -> MTE3 without the vector unit), then per index the
// target row and the update row loaded, subtracted, and written back at the index's offset (written here).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void scatter_sub_rows(GM_ADDR var, GM_ADDR idx, GM_ADDR upd, GM_ADDR out,
                                                       GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kRows = 16, kCols = 40, kUpdates = 8;
  TPipe pipe;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> passQ;
  TQue<QuePosition::VECIN, 1> rowQ, updQ;
  TQue<QuePosition::VECOUT, 1> outQ;
  pipe.InitBuffer(passQ, 1, kRows * kCols * sizeof(float));
  pipe.InitBuffer(rowQ, 1, kCols * sizeof(float));
  pipe.InitBuffer(updQ, 1, kCols * sizeof(float));
  pipe.InitBuffer(outQ, 1, kCols * sizeof(float));
  GlobalTensor<float> varGm, updGm, outGm;
  GlobalTensor<int32_t> idxGm;
  varGm.SetGlobalBuffer((__gm__ float*)var, kRows * kCols);
  updGm.SetGlobalBuffer((__gm__ float*)upd, kUpdates * kCols);
  outGm.SetGlobalBuffer((__gm__ float*)out, kRows * kCols);
  idxGm.SetGlobalBuffer((__gm__ int32_t*)idx, kUpdates);

  LocalTensor<float> all = passQ.AllocTensor<float>();
  DataCopy(all, varGm, kRows * kCols);
  passQ.EnQue(all);
  all = passQ.DeQue<float>();
  DataCopy(outGm, all, kRows * kCols);
  passQ.FreeTensor(all);

  for (uint32_t i = 0; i < kUpdates; ++i) {
    const int32_t row = idxGm.GetValue(i);
    LocalTensor<float> r = rowQ.AllocTensor<float>();
    LocalTensor<float> u = updQ.AllocTensor<float>();
    DataCopy(r, varGm[row * kCols], kCols);
    DataCopy(u, updGm[i * kCols], kCols);
    rowQ.EnQue(r);
    updQ.EnQue(u);
    r = rowQ.DeQue<float>();
    u = updQ.DeQue<float>();
    LocalTensor<float> o = outQ.AllocTensor<float>();
    Sub(o, r, u, kCols);
    outQ.EnQue(o);
    rowQ.FreeTensor(r);
    updQ.FreeTensor(u);
    o = outQ.DeQue<float>();
    DataCopy(outGm[row * kCols], o, kCols);
    outQ.FreeTensor(o);
  }
}
