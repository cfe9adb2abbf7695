// y = 2 * relu(x), fp16 I/O computed in fp32, with TBuf only (no queues): the pipes are ordered by hand with
// SetFlag/WaitFlag on explicit event ids, the style of hand-synchronised public kernels (written here).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void tbuf_relu(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kTile = 512, kTiles = 4, kBlock = kTile * kTiles;
  TPipe pipe;
  TBuf<TPosition::VECCALC> inBuf, outBuf, workBuf;
  pipe.InitBuffer(inBuf, kTile * sizeof(half));
  pipe.InitBuffer(outBuf, kTile * sizeof(half));
  pipe.InitBuffer(workBuf, kTile * sizeof(float));
  GlobalTensor<half> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ half*)x + kBlock * GetBlockIdx(), kBlock);
  yGm.SetGlobalBuffer((__gm__ half*)y + kBlock * GetBlockIdx(), kBlock);
  LocalTensor<half> in = inBuf.Get<half>();
  LocalTensor<half> out = outBuf.Get<half>();
  LocalTensor<float> w = workBuf.Get<float>();
  for (uint32_t i = 0; i < kTiles; ++i) {
    if (i > 0) WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);   // the previous tile's Cast has read `in`
    DataCopy(in, xGm[i * kTile], kTile);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Cast(w, in, RoundMode::CAST_NONE, kTile);
    if (i + 1 < kTiles) SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
    Relu(w, w, kTile);
    Muls(w, w, 2.0f, kTile);
    if (i > 0) WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);   // the previous tile's copy-out has read `out`
    Cast(out, w, RoundMode::CAST_RINT, kTile);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
    DataCopy(yGm[i * kTile], out, kTile);
    if (i + 1 < kTiles) SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
  }
}
