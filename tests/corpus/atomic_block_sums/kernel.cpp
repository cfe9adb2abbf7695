// Each of 8 blocks sums its 2048 floats (ReduceSum, level-2 form), writes its sum to out[1 + block] and adds
// it to out[0] with SetAtomicAdd: the multi-core accumulation style of public reduction kernels (written here).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void block_sums(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kLen = 2048;
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> inQ;
  TQue<QuePosition::VECOUT, 1> outQ;
  TBuf<TPosition::VECCALC> work;
  pipe.InitBuffer(inQ, 1, kLen * sizeof(float));
  pipe.InitBuffer(outQ, 1, 8 * sizeof(float));
  pipe.InitBuffer(work, kLen * sizeof(float));
  GlobalTensor<float> xGm, outGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + kLen * GetBlockIdx(), kLen);
  outGm.SetGlobalBuffer((__gm__ float*)out, 1 + GetBlockNum());
  LocalTensor<float> in = inQ.AllocTensor<float>();
  DataCopy(in, xGm, kLen);
  inQ.EnQue(in);
  in = inQ.DeQue<float>();
  LocalTensor<float> s = outQ.AllocTensor<float>();
  ReduceSum(s, in, work.Get<float>(), kLen);
  inQ.FreeTensor(in);
  outQ.EnQue(s);
  s = outQ.DeQue<float>();
  DataCopyExtParams one{1, sizeof(float), 0, 0, 0};
  DataCopyPad(outGm[1 + GetBlockIdx()], s, one);
  SetAtomicAdd<float>();
  DataCopyPad(outGm[0], s, one);
  SetAtomicNone();
  outQ.FreeTensor(s);
}
