// Rendered by opkit from templates/families/elementwise/kernel.cpp.j2 for SiluFP32 (activation=silu, backward=false).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// silu_fp32: y = x * sigmoid(x) = x / (1 + exp(-x)), fp16/bf16/fp32 I/O, FP32 compute.
// The quotient form keeps relative accuracy in both tails and gives PyTorch's results on
// +inf (inf), -inf (-inf / inf = nan) and nan.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compute in the I/O dtype
#else
using ComputeT = float;
#endif

namespace silu_fp32_impl {

constexpr int32_t kBufferNum = 2;     // copy-in of tile i+1 overlaps compute of tile i

template <class T>
class SiluKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SiluFP32TilingData& td) {
    tileLen_ = td.tileLen;
    // This core's range: the first cores take one 256-element unit more (opkit/kernel_util.h).
    const opkit::BlockRange range = opkit::RangeOfBlock(td.total);
    const uint64_t start = range.start;
    len_ = range.len;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + start, len_);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + start, len_);
    if (len_ == 0) return;
    pipe_.InitBuffer(inQ_, kBufferNum, tileLen_ * sizeof(T));
    pipe_.InitBuffer(outQ_, kBufferNum, tileLen_ * sizeof(T));
    pipe_.InitBuffer(xBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(aBuf_, tileLen_ * sizeof(float));
  }

  __aicore__ inline void Process() {
    for (uint64_t off = 0; off < len_; off += tileLen_) {
      const uint32_t n = static_cast<uint32_t>(len_ - off < tileLen_ ? len_ - off : tileLen_);
      CopyIn(off, n);
      Compute(n);
      CopyOut(off, n);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
    DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPadExtParams<T> pad{false, 0, 0, static_cast<T>(0)};
    LocalTensor<T> in = inQ_.AllocTensor<T>();
    DataCopyPad(in, xGm_[off], params, pad);
    inQ_.EnQue(in);
  }

  __aicore__ inline void Compute(uint32_t n) {
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<T> in = inQ_.DeQue<T>();
    LocalTensor<T> out = outQ_.AllocTensor<T>();
    LocalTensor<ComputeT> x = xBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> y;
    if constexpr (opkit::SameType<T, ComputeT>::value) {
      x = in;
      y = out;
    } else {
      Cast(x, in, RoundMode::CAST_NONE, n);
      y = xBuf_.Get<ComputeT>();  // Div reads x and writes y element by element (full overlap is allowed)
    }
    LocalTensor<ComputeT> d = aBuf_.Get<ComputeT>();
    Muls(d, x, static_cast<ComputeT>(-1.0f), cnt);
    Exp(d, d, cnt);
    Adds(d, d, static_cast<ComputeT>(1.0f), cnt);
    Div(y, x, d, cnt);
    if constexpr (!opkit::SameType<T, ComputeT>::value) {
      Cast(out, y, RoundMode::CAST_RINT, n);
    }
    inQ_.FreeTensor(in);
    outQ_.EnQue(out);
  }

  __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
    LocalTensor<T> out = outQ_.DeQue<T>();
    DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(yGm_[off], out, params);
    outQ_.FreeTensor(out);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> xBuf_, aBuf_;
  GlobalTensor<T> xGm_, yGm_;
  uint64_t len_ = 0;
  uint32_t tileLen_ = 0;
};

}  // namespace silu_fp32_impl

extern "C" __global__ __aicore__ void silu_fp32(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SiluFP32TilingData, td, tiling);
  silu_fp32_impl::SiluKernel<DTYPE_X> op;
  op.Init(x, y, td);
  op.Process();
}
