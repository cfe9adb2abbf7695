// A CANN-style CPU-debug program: an AscendC vector-add kernel plus a host main that runs it with
// ICPU_RUN_KF. Unchanged, it builds against CANN's tikicpulib or against opkit's emulator:
//   g++ -std=c++17 $(opkit cflags) add_custom.cpp $(opkit cflags --libs) -o add_custom && ./add_custom
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct AddTiling {
  uint32_t totalLength;  // elements per core
  uint32_t tileLength;   // elements per tile (multiple of 16 for half: 32-byte DataCopy)
};

class KernelAdd {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& t, AscendC::TPipe* pipe) {
    blockLen_ = t.totalLength;
    tileLen_ = t.tileLength;
    const uint64_t off = blockLen_ * AscendC::GetBlockIdx();
    xGm_.SetGlobalBuffer((__gm__ half*)x + off, blockLen_);
    yGm_.SetGlobalBuffer((__gm__ half*)y + off, blockLen_);
    zGm_.SetGlobalBuffer((__gm__ half*)z + off, blockLen_);
    pipe->InitBuffer(inX_, BUFFER_NUM, tileLen_ * sizeof(half));
    pipe->InitBuffer(inY_, BUFFER_NUM, tileLen_ * sizeof(half));
    pipe->InitBuffer(outZ_, BUFFER_NUM, tileLen_ * sizeof(half));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < blockLen_ / tileLen_; ++i) {
      AscendC::LocalTensor<half> x = inX_.AllocTensor<half>();
      AscendC::LocalTensor<half> y = inY_.AllocTensor<half>();
      AscendC::DataCopy(x, xGm_[i * tileLen_], tileLen_);
      AscendC::DataCopy(y, yGm_[i * tileLen_], tileLen_);
      inX_.EnQue(x);
      inY_.EnQue(y);
      x = inX_.DeQue<half>();
      y = inY_.DeQue<half>();
      AscendC::LocalTensor<half> z = outZ_.AllocTensor<half>();
      AscendC::Add(z, x, y, tileLen_);
      outZ_.EnQue(z);
      inX_.FreeTensor(x);
      inY_.FreeTensor(y);
      z = outZ_.DeQue<half>();
      AscendC::DataCopy(zGm_[i * tileLen_], z, tileLen_);
      outZ_.FreeTensor(z);
    }
  }

 private:
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inX_, inY_;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outZ_;
  AscendC::GlobalTensor<half> xGm_, yGm_, zGm_;
  uint32_t blockLen_ = 0, tileLen_ = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddTiling tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  AscendC::TPipe pipe;
  KernelAdd op;
  op.Init(x, y, z, tiling, &pipe);
  op.Process();
}

#ifdef ASCENDC_CPU_DEBUG
#include "tikicpulib.h"

int main() {
  constexpr uint32_t kBlocks = 8, kPerCore = 2048, kTile = 256;
  const size_t n = kBlocks * kPerCore, bytes = n * sizeof(half);
  half* x = static_cast<half*>(AscendC::GmAlloc(bytes));
  half* y = static_cast<half*>(AscendC::GmAlloc(bytes));
  half* z = static_cast<half*>(AscendC::GmAlloc(bytes));
  for (size_t i = 0; i < n; ++i) {
    x[i] = half(static_cast<float>(i % 97) * 0.25f);
    y[i] = half(1.5f);
  }
  AscendC::SetKernelMode(AscendC::KernelMode::AIV_MODE);
  AddTiling tiling{kPerCore, kTile};
  ICPU_RUN_KF(add_custom, kBlocks, (GM_ADDR)x, (GM_ADDR)y, (GM_ADDR)z, tiling);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (static_cast<float>(z[i]) != static_cast<float>(half(static_cast<float>(x[i]) + 1.5f))) ++bad;
  std::printf("add_custom: %zu elements, %zu mismatches\n", n, bad);
  AscendC::GmFree(x);
  AscendC::GmFree(y);
  AscendC::GmFree(z);
  return bad == 0 ? 0 : 1;
}
#endif
