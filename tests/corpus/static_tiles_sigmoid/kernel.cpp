// Sigmoid of 8 x 2048 floats with UB carved by LocalMemAllocator<Hardware::UB> instead of TPipe queues (the
// "static tensor" style of newer samples): two input tiles and one output tile per block, ping-pong over the
// block's 2048 elements, explicit MTE2->V, V->MTE3 and MTE3->V / V->MTE2 flags between the stages (written
// here, in the style of public kernels that manage UB by hand).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void static_sigmoid(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  constexpr uint32_t kBlockLen = 2048, kTile = 512;
  LocalMemAllocator<Hardware::UB> ub;
  LocalTensor<float> in[2] = {ub.Alloc<float, kTile>(), ub.Alloc<float, kTile>()};
  LocalTensor<float> out[2] = {ub.Alloc<float, kTile>(), ub.Alloc<float, kTile>()};
  GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + kBlockLen * GetBlockIdx(), kBlockLen);
  yGm.SetGlobalBuffer((__gm__ float*)y + kBlockLen * GetBlockIdx(), kBlockLen);
  for (uint32_t t = 0; t < kBlockLen / kTile; ++t) {
    const uint32_t b = t % 2;
    if (t >= 2) {  // the tile's buffers were last used two steps ago: wait for that step's vector work and copy-out
      WaitFlag<HardEvent::V_MTE2>(b);
      WaitFlag<HardEvent::MTE3_V>(b);
    }
    DataCopy(in[b], xGm[t * kTile], kTile);
    SetFlag<HardEvent::MTE2_V>(b);
    WaitFlag<HardEvent::MTE2_V>(b);
    Muls(out[b], in[b], -1.0f, kTile);   // 1 / (1 + exp(-x))
    Exp(out[b], out[b], kTile);
    Adds(out[b], out[b], 1.0f, kTile);
    Reciprocal(out[b], out[b], kTile);
    SetFlag<HardEvent::V_MTE2>(b);
    SetFlag<HardEvent::V_MTE3>(b);
    WaitFlag<HardEvent::V_MTE3>(b);
    DataCopy(yGm[t * kTile], out[b], kTile);
    SetFlag<HardEvent::MTE3_V>(b);
  }
  for (uint32_t b = 0; b < 2; ++b) {  // the last two steps' flags
    WaitFlag<HardEvent::V_MTE2>(b);
    WaitFlag<HardEvent::MTE3_V>(b);
  }
}
