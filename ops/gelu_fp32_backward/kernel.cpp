// Rendered by opkit from templates/families/elementwise/backward/kernel.cpp.j2 for GeluFP32Backward (activation=gelu, backward=true).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// GeluFP32Backward: dx = dy * GELU'(x), fp16/bf16/fp32 I/O, FP32 compute.
//
// approximate="none": GELU'(x) = Phi(x) + x * phi(x). Phi comes from h = Phi(-|x|) = 0.5 * erfc(|x|/sqrt(2)),
// evaluated as in gelu_fp32 (Numerical Recipes' Chebyshev erfc, relative error < 1.2e-7 for all
// arguments, see gelu_fp32/kernel.cpp), and Phi(x) = h + s * (1 - 2h) with s = clamp(x * 2^100, 0, 1)
// the step function (s is only fuzzy for |x| < 2^-100, where 1 - 2h is 0 in FP32 anyway).
// phi(x) = exp(-x^2/2 - ln(sqrt(2 pi))).
// approximate="tanh": with e = exp(-2u), u = sqrt(2/pi) (x + 0.044715 x^3), s = 1 / (1 + e):
// GELU'(x) = s * (1 + 2 sqrt(2/pi) x (1 + 3 * 0.044715 x^2) (1 - s)) (PyTorch's formula rewritten with
// 1 + tanh(u) = 2s and 1 - tanh(u)^2 = 4 s (1 - s)).
// Both forms give nan at +-inf and nan, as PyTorch's autograd does.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compute in the I/O dtype
#else
using ComputeT = float;
#endif

namespace gelu_fp32_backward_impl {

constexpr int32_t kBufferNum = 2;     // copy-in of tile i+1 overlaps compute of tile i

template <class T>
class GeluGradKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR dy, GM_ADDR dx, const GeluFP32BackwardTilingData& td) {
    tileLen_ = td.tileLen;
    approximate_ = td.approximate;
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
    pipe_.InitBuffer(aBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(bBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(cBuf_, tileLen_ * sizeof(float));
    pipe_.InitBuffer(numBuf_, tileLen_ * sizeof(float));
    // Div needs a tensor numerator: 2.0 for t = 2 / (2 + z) (erf form), 1.0 for s = 1 / (1 + e) (tanh form).
    LocalTensor<ComputeT> num = numBuf_.Get<ComputeT>();
    Duplicate(num, static_cast<ComputeT>(approximate_ == 0 ? 2.0f : 1.0f), static_cast<int32_t>(tileLen_));
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
    if (approximate_ == 0) {
      GradErf(x, n);
    } else {
      GradTanh(x, n);
    }
    Mul(dx, aBuf_.Get<ComputeT>(), dy, static_cast<int32_t>(n));  // a holds GELU'(x)
    if constexpr (!opkit::SameType<T, ComputeT>::value) {
      Cast(out, dx, RoundMode::CAST_RINT, n);
    }
    xQ_.FreeTensor(xin);
    dyQ_.FreeTensor(dyin);
    outQ_.EnQue(out);
  }

  static __aicore__ inline ComputeT C(float v) { return static_cast<ComputeT>(v); }

  // a = Phi(x) + x * phi(x).
  __aicore__ inline void GradErf(const LocalTensor<ComputeT>& x, uint32_t n) {
    const int32_t cnt = static_cast<int32_t>(n);
    // 2^100 turns any |x| >= 2^-100 into a saturated step; the 16-bit naive variant needs a smaller factor.
    const float kStep = sizeof(ComputeT) == 4 ? 1.2676506002282294e30f : 16384.0f;
    LocalTensor<ComputeT> z = aBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> t = bBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> p = cBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> two = numBuf_.Get<ComputeT>();
    Abs(z, x, cnt);
    Muls(z, z, C(0.70710678118654752f), cnt);  // z = |x| / sqrt(2)
    Adds(t, z, C(2.0f), cnt);
    Div(t, two, t, cnt);                        // t = 1 / (1 + z/2)
    Muls(p, t, C(0.17087277f), cnt);
    Adds(p, p, C(-0.82215223f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(1.48851587f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(-1.13520398f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(0.27886807f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(-0.18628806f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(0.09678418f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(0.37409196f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(1.00002368f), cnt);
    Mul(p, p, t, cnt);
    Adds(p, p, C(-1.26551223f - 0.69314718055994531f), cnt);
    Mul(z, z, z, cnt);  // z = x^2 / 2
    Sub(p, p, z, cnt);
    Exp(p, p, cnt);
    Mul(p, p, t, cnt);  // p = h = Phi(-|x|)
    Adds(z, z, C(0.91893853320467274f), cnt);  // ln(sqrt(2 pi))
    Muls(z, z, C(-1.0f), cnt);
    Exp(z, z, cnt);
    Mul(z, z, x, cnt);  // z = x * phi(x)
    Muls(t, x, C(kStep), cnt);
    Maxs(t, t, C(0.0f), cnt);
    Mins(t, t, C(1.0f), cnt);  // t = step(x)
    Add(z, z, p, cnt);
    Muls(p, p, C(-2.0f), cnt);
    Adds(p, p, C(1.0f), cnt);
    Mul(p, p, t, cnt);
    Add(z, z, p, cnt);  // h + step * (1 - 2h) + x * phi
  }

  // a = s * (1 + 2 beta x (1 + 3 kappa x^2) (1 - s)).
  __aicore__ inline void GradTanh(const LocalTensor<ComputeT>& x, uint32_t n) {
    const int32_t cnt = static_cast<int32_t>(n);
    constexpr float kBeta = 0.79788456080286536f;  // sqrt(2/pi)
    constexpr float kKappa = 0.044715f;
    LocalTensor<ComputeT> a = aBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> s = bBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> q = cBuf_.Get<ComputeT>();
    LocalTensor<ComputeT> one = numBuf_.Get<ComputeT>();
    Mul(a, x, x, cnt);
    Muls(s, a, C(-2.0f * kBeta * kKappa), cnt);
    Adds(s, s, C(-2.0f * kBeta), cnt);
    Mul(s, s, x, cnt);  // -2u
    Exp(s, s, cnt);
    Adds(s, s, C(1.0f), cnt);
    Div(s, one, s, cnt);  // s = sigmoid(2u)
    Muls(a, a, C(3.0f * kKappa), cnt);
    Adds(a, a, C(1.0f), cnt);
    Muls(a, a, C(2.0f * kBeta), cnt);
    Mul(a, a, x, cnt);
    Muls(q, s, C(-1.0f), cnt);
    Adds(q, q, C(1.0f), cnt);
    Mul(a, a, q, cnt);
    Adds(a, a, C(1.0f), cnt);
    Mul(a, a, s, cnt);
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
  TBuf<TPosition::VECCALC> xBuf_, dyBuf_, aBuf_, bBuf_, cBuf_, numBuf_;
  GlobalTensor<T> xGm_, dyGm_, dxGm_;
  uint64_t len_ = 0;
  uint32_t tileLen_ = 0;
  uint32_t approximate_ = 0;
};

}  // namespace gelu_fp32_backward_impl

extern "C" __global__ __aicore__ void gelu_fp32_backward(GM_ADDR x, GM_ADDR dy, GM_ADDR dx, GM_ADDR workspace,
                                                         GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(GeluFP32BackwardTilingData, td, tiling);
  gelu_fp32_backward_impl::GeluGradKernel<DTYPE_X> op;
  op.Init(x, dy, dx, td);
  op.Process();
}
