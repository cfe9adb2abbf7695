// Rendered by opkit from templates/families/elementwise/backward/kernel.cpp.j2 for SiluFP32Backward (activation=silu, backward=true).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// SiluFP32Backward: dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x) = 1 / (1 + exp(-x)) (PyTorch's
// silu_backward formula), fp16/bf16/fp32 I/O, FP32 compute. Gives nan at +-inf and nan, as PyTorch does.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compute in the I/O dtype
#else
using ComputeT = float;
#endif

namespace silu_fp32_backward_impl {

constexpr int32_t kBufferNum = 2;     // copy-in of tile i+1 overlaps compute of tile i

template <class T>
class SiluGradKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR dy, GM_ADDR dx, const SiluFP32BackwardTilingData& td) {
    tileLen_ = td.tileLen;
    // This core's range: the first cores take one 256-element unit more (opkit/kernel_util.h).
    const opkit::BlockRange range = opkit::RangeOfBlock(td.total);
    const uint64_t start = range.start;
    len_ = range.len;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + start, len_);
    dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(dy) + start, len_);
    dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(dx) + start, len_);
    if (len_ == 0) return;
    pipe_.InitBuffer(xQ_, kBufferNum, tileLen_ * sizeof(T));
    pipe_.InitBuffer(dyQ_, kBufferNum, tileLen_ * sizeof(T));
    pipe_.InitBuffer(outQ_, kBufferNum, tileLen_ * sizeof(T));
    pipe_.InitBuffer(xBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(dyBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(sBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(qBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(oneBuf_, tileLen_ * sizeof(float));
    // Div needs a tensor numerator: the constant 1.0 for s = 1 / (1 + exp(-x)).
    Duplicate(oneBuf_.Get<ComputeT>(), static_cast<ComputeT>(1.0f), static_cast<int32_t>(tileLen_));
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
    LocalTensor<T> xin = xQ_.AllocTensor<T>();
    DataCopyPad(xin, xGm_[off], params, pad);
    xQ_.EnQue(xin);
    LocalTensor<T> dyin = dyQ_.AllocTensor<T>();
    DataCopyPad(dyin, dyGm_[off], params, pad);
    dyQ_.EnQue(dyin);
  }

  __aicore__ inline void Compute(uint32_t n) {
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<T> xin = xQ_.DeQue<T>();
    LocalTensor<T> dyin = dyQ_.DeQue<T>();
    LocalTensor<T> out = outQ_.AllocTensor<T>();
    LocalTensor<ComputeT> x = xBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> dy = dyBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> dx;
    if constexpr (opkit::SameType<T, ComputeT>::value) {
      x = xin;
      dy = dyin;
      dx = out;
    } else {
      Cast(x, xin, RoundMode::CAST_NONE, n);
      Cast(dy, dyin, RoundMode::CAST_NONE, n);
      dx = dyBuf_.Get<ComputeT>();  // the last multiply reads dy and writes dx element by element
    }
    LocalTensor<ComputeT> s = sBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> q = qBuf_.Get<ComputeT>();
    Muls(s, x, static_cast<ComputeT>(-1.0f), cnt);
    Exp(s, s, cnt);
    Adds(s, s, static_cast<ComputeT>(1.0f), cnt);
    Div(s, oneBuf_.Get<ComputeT>(), s, cnt);  // s = sigmoid(x)
    Muls(q, s, static_cast<ComputeT>(-1.0f), cnt);
    Adds(q, q, static_cast<ComputeT>(1.0f), cnt);
    Mul(q, q, x, cnt);
    Adds(q, q, static_cast<ComputeT>(1.0f), cnt);
    Mul(q, q, s, cnt);  // s * (1 + x * (1 - s))
    Mul(dx, q, dy, cnt);
    if constexpr (!opkit::SameType<T, ComputeT>::value) {
      Cast(out, dx, RoundMode::CAST_RINT, n);
    }
    xQ_.FreeTensor(xin);
    dyQ_.FreeTensor(dyin);
    outQ_.EnQue(out);
  }

  __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
    LocalTensor<T> out = outQ_.DeQue<T>();
    DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(dxGm_[off], out, params);
    outQ_.FreeTensor(out);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 1> xQ_, dyQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> xBuf_, dyBuf_, sBuf_, qBuf_, oneBuf_;
  GlobalTensor<T> xGm_, dyGm_, dxGm_;
  uint64_t len_ = 0;
  uint32_t tileLen_ = 0;
};

}  // namespace silu_fp32_backward_impl

extern "C" __global__ __aicore__ void silu_fp32_backward(GM_ADDR x, GM_ADDR dy, GM_ADDR dx, GM_ADDR workspace,
                                                         GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SiluFP32BackwardTilingData, td, tiling);
  silu_fp32_backward_impl::SiluGradKernel<DTYPE_X> op;
  op.Init(x, dy, dx, td);
  op.Process();
}
