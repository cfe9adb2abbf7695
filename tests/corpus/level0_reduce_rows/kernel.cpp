// Row sums and row maxima of a (32, 200) float matrix with the level-0 ReduceSum / ReduceMax: each row is
// padded to 256 floats in UB (DataCopyPad), then reduced over its 200 valid lanes as 4 repeats of a 64-lane
// continuous mask -- the last repeat masked down by a second call -- and srcRepStride 8 (written here, in the
// style of public kernels that reduce with mask + repeatTime + srcRepStride instead of a count).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void rows_reduce(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kRows = 32, kCols = 200, kPadded = 256;
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> inQ;
  TBuf<TPosition::VECCALC> work, part, resBuf;
  pipe.InitBuffer(inQ, 1, kPadded * sizeof(float));
  pipe.InitBuffer(work, kPadded * sizeof(float));
  pipe.InitBuffer(part, 16 * sizeof(float));  // sums at 0.., maxima at 8.. (a source must be 32-byte aligned)
  pipe.InitBuffer(resBuf, 2 * kRows * sizeof(float));
  GlobalTensor<float> xGm, outGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, kRows * kCols);
  outGm.SetGlobalBuffer((__gm__ float*)out, 2 * kRows);  // row sums, then row maxima
  LocalTensor<float> w = work.Get<float>(), p = part.Get<float>();
  LocalTensor<float> res = resBuf.Get<float>();
  for (uint32_t row = 0; row < kRows; ++row) {
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopyPad(in, xGm[row * kCols], DataCopyExtParams{1, kCols * sizeof(float), 0, 0, 0},
                DataCopyPadExtParams<float>{false, 0, 0, 0});
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    // lanes 0..191: three full repeats; lanes 192..199: one repeat with an 8-lane mask
    ReduceSum(p, in, w, 64, 3, 8);
    ReduceSum(p[1], in[192], w, 8, 1, 8);
    ReduceSum(p[2], p, w, 2, 1, 8);
    ReduceMax(p[8], in, w, 64, 3, 8, false);
    ReduceMax(p[9], in[192], w, 8, 1, 8, false);
    ReduceMax(p[10], p[8], w, 2, 1, 8, false);
    event_t ev = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(ev);
    WaitFlag<HardEvent::V_S>(ev);
    res.SetValue(row, p.GetValue(2));
    res.SetValue(kRows + row, p.GetValue(10));
    event_t back = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::S_V));
    SetFlag<HardEvent::S_V>(back);
    WaitFlag<HardEvent::S_V>(back);
    inQ.FreeTensor(in);
  }
  event_t toGm = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::S_MTE3));
  SetFlag<HardEvent::S_MTE3>(toGm);
  WaitFlag<HardEvent::S_MTE3>(toGm);
  DataCopy(outGm, res, 2 * kRows);
}
