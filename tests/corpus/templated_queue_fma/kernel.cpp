// z = x * y + x: a templated kernel class with double-buffered queues over 8 blocks (the class-template style
// of public elementwise kernels; written here).
#include "kernel_operator.h"
using namespace AscendC;

template <typename T, int32_t BUFFER_NUM = 2>
class KernelFma {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t blockLength, uint32_t tile) {
    len_ = blockLength;
    tile_ = tile;
    xGm_.SetGlobalBuffer((__gm__ T*)x + blockLength * GetBlockIdx(), blockLength);
    yGm_.SetGlobalBuffer((__gm__ T*)y + blockLength * GetBlockIdx(), blockLength);
    zGm_.SetGlobalBuffer((__gm__ T*)z + blockLength * GetBlockIdx(), blockLength);
    pipe_.InitBuffer(qx_, BUFFER_NUM, tile * sizeof(T));
    pipe_.InitBuffer(qy_, BUFFER_NUM, tile * sizeof(T));
    pipe_.InitBuffer(qz_, BUFFER_NUM, tile * sizeof(T));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < len_ / tile_; ++i) {
      CopyIn(i);
      Compute();
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i) {
    LocalTensor<T> x = qx_.template AllocTensor<T>();
    LocalTensor<T> y = qy_.template AllocTensor<T>();
    DataCopy(x, xGm_[i * tile_], tile_);
    DataCopy(y, yGm_[i * tile_], tile_);
    qx_.EnQue(x);
    qy_.EnQue(y);
  }
  __aicore__ inline void Compute() {
    LocalTensor<T> x = qx_.template DeQue<T>();
    LocalTensor<T> y = qy_.template DeQue<T>();
    LocalTensor<T> z = qz_.template AllocTensor<T>();
    Mul(z, x, y, tile_);
    Add(z, z, x, tile_);
    qz_.EnQue(z);
    qx_.FreeTensor(x);
    qy_.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<T> z = qz_.template DeQue<T>();
    DataCopy(zGm_[i * tile_], z, tile_);
    qz_.FreeTensor(z);
  }
  TPipe pipe_;
  TQue<QuePosition::VECIN, BUFFER_NUM> qx_, qy_;
  TQue<QuePosition::VECOUT, BUFFER_NUM> qz_;
  GlobalTensor<T> xGm_, yGm_, zGm_;
  uint32_t len_ = 0, tile_ = 0;
};

extern "C" __global__ __aicore__ void templated_fma(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
  (void)tiling;
  KernelFma<float> op;
  op.Init(x, y, z, 4096, 1024);
  op.Process();
}
