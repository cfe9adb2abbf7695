// Reverse each 256-float tile with Gather: the offsets (bytes into the source tile) come from GM as uint32,
// the index-table style of public gather kernels (written here).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void gather_rev(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kTile = 256;
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qx, qo;
  TQue<QuePosition::VECOUT, 1> qy;
  pipe.InitBuffer(qx, 1, kTile * sizeof(float));
  pipe.InitBuffer(qo, 1, kTile * sizeof(uint32_t));
  pipe.InitBuffer(qy, 1, kTile * sizeof(float));
  GlobalTensor<float> xGm, yGm;
  GlobalTensor<uint32_t> oGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + kTile * GetBlockIdx(), kTile);
  yGm.SetGlobalBuffer((__gm__ float*)y + kTile * GetBlockIdx(), kTile);
  oGm.SetGlobalBuffer((__gm__ uint32_t*)offsets, kTile);
  LocalTensor<float> a = qx.AllocTensor<float>();
  LocalTensor<uint32_t> o = qo.AllocTensor<uint32_t>();
  DataCopy(a, xGm, kTile);
  DataCopy(o, oGm, kTile);
  qx.EnQue(a);
  qo.EnQue(o);
  a = qx.DeQue<float>();
  o = qo.DeQue<uint32_t>();
  LocalTensor<float> b = qy.AllocTensor<float>();
  Gather(b, a, o, 0u, kTile);
  qx.FreeTensor(a);
  qo.FreeTensor(o);
  qy.EnQue(b);
  b = qy.DeQue<float>();
  DataCopy(yGm, b, kTile);
  qy.FreeTensor(b);
}
