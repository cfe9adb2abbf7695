// z = max(x, y) over 1000 floats with Compare + Select: Compare needs 256-byte multiples, so the tail is
// computed on a buffer cleared to 1024 elements and only 1000 go back out with DataCopyPad (written here, in
// the style of public kernels that round a ragged tail up for Compare).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void cmp_sel_max(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kN = 1000, kAligned = 1024;
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qx, qy;
  TQue<QuePosition::VECOUT, 1> qz;
  TBuf<TPosition::VECCALC> maskBuf;
  pipe.InitBuffer(qx, 1, kAligned * sizeof(float));
  pipe.InitBuffer(qy, 1, kAligned * sizeof(float));
  pipe.InitBuffer(qz, 1, kAligned * sizeof(float));
  pipe.InitBuffer(maskBuf, kAligned / 8);
  GlobalTensor<float> xGm, yGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, kN);
  yGm.SetGlobalBuffer((__gm__ float*)y, kN);
  zGm.SetGlobalBuffer((__gm__ float*)z, kN);
  LocalTensor<float> a = qx.AllocTensor<float>();
  LocalTensor<float> b = qy.AllocTensor<float>();
  Duplicate(a, 0.0f, kAligned);
  Duplicate(b, 0.0f, kAligned);
  event_t ev = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE2));
  SetFlag<HardEvent::V_MTE2>(ev);
  WaitFlag<HardEvent::V_MTE2>(ev);
  DataCopyExtParams cp{1, kN * sizeof(float), 0, 0, 0};
  DataCopyPadExtParams<float> noPad{false, 0, 0, 0.0f};
  DataCopyPad(a, xGm, cp, noPad);
  DataCopyPad(b, yGm, cp, noPad);
  qx.EnQue(a);
  qy.EnQue(b);
  a = qx.DeQue<float>();
  b = qy.DeQue<float>();
  LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
  LocalTensor<float> c = qz.AllocTensor<float>();
  Compare(mask, a, b, CMPMODE::GT, kAligned);
  Select(c, mask, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, kAligned);
  qx.FreeTensor(a);
  qy.FreeTensor(b);
  qz.EnQue(c);
  c = qz.DeQue<float>();
  DataCopyPad(zGm, c, cp);
  qz.FreeTensor(c);
}
