// HypotFP32: aten::hypot, y = sqrt(x^2 + other^2), fp16/bf16/fp32 I/O, FP32 compute. Scaffolded by
// `opkit scan --scaffold` (opkit new --from-aten aten::hypot); the only edit is Compute() below (with its
// helper Hypot()): sqrt(x^2 + other^2), and +inf where |x| or |other| is +inf even if the other is NaN.
// In fp16 the squares overflow for |x| > 256: computing in FP32 is what makes this op correct.
#include "kernel_operator.h"
#include "tiling.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compute in the I/O dtype
#else
using ComputeT = float;
#endif

namespace hypot_fp32_impl {

constexpr int32_t kBufferNum = 2;     // copy-in of tile i+1 overlaps compute of tile i
constexpr uint64_t kSplitUnit = 256;  // must match kHypotFP32SplitUnit in tiling.h
constexpr int kInputs = 2;

template <class A, class B> struct IsSame { static constexpr bool value = false; };
template <class A> struct IsSame<A, A> { static constexpr bool value = true; };

template <class T>
class Kernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR other, GM_ADDR y, const HypotFP32TilingData& td) {
    td_ = td;
    tileLen_ = td.tileLen;
    const uint64_t units = (td.total + kSplitUnit - 1) / kSplitUnit;
    const uint64_t blocks = GetBlockNum();
    const uint64_t idx = GetBlockIdx();
    const uint64_t base = units / blocks, rem = units % blocks;
    const uint64_t firstUnit = idx * base + (idx < rem ? idx : rem);
    const uint64_t start = firstUnit * kSplitUnit;
    uint64_t end = (firstUnit + base + (idx < rem ? 1 : 0)) * kSplitUnit;
    if (end > td.total) end = td.total;
    len_ = end > start ? end - start : 0;
    GM_ADDR ins[kInputs] = {x, other};
    for (int k = 0; k < kInputs; ++k) inGm_[k].SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ins[k]) + start, len_);
    outGm_[0].SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + start, len_);
    if (len_ == 0) return;
    for (int k = 0; k < kInputs; ++k) {
      pipe_.InitBuffer(inQ_[k], kBufferNum, tileLen_ * sizeof(T));
      pipe_.InitBuffer(xBuf_[k], tileLen_ * sizeof(float));
    }
    pipe_.InitBuffer(outQ_, kBufferNum, tileLen_ * sizeof(T));
    pipe_.InitBuffer(yBuf_, tileLen_ * sizeof(float));
  }

  __aicore__ inline void Process() {
    for (uint64_t off = 0; off < len_; off += tileLen_) {
      const uint32_t n = static_cast<uint32_t>(len_ - off < tileLen_ ? len_ - off : tileLen_);
      for (int k = 0; k < kInputs; ++k) CopyIn(k, off, n);
      for (int o = 0; o < 1; ++o) {
        Compute(o, n);
        CopyOut(o, off, n);
      }
      for (int k = 0; k < kInputs; ++k) inQ_[k].FreeTensor(in_[k]);
    }
  }

 private:
  __aicore__ inline void CopyIn(int k, uint64_t off, uint32_t n) {
    LocalTensor<T> in = inQ_[k].AllocTensor<T>();
    DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPadExtParams<T> pad{false, 0, 0, static_cast<T>(0)};
    DataCopyPad(in, inGm_[k][off], params, pad);
    inQ_[k].EnQue(in);
    in_[k] = inQ_[k].DeQue<T>();
  }

  // x[k]: input k of this tile in ComputeT; write result `o` into y.
  __aicore__ inline void Compute(int o, uint32_t n) {
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<T> out = outQ_.AllocTensor<T>();
    LocalTensor<ComputeT> x[kInputs];
    LocalTensor<ComputeT> y;
    if constexpr (IsSame<T, ComputeT>::value) {   // fp32 I/O (and the naive variant): no casts
      for (int k = 0; k < kInputs; ++k) x[k] = in_[k];
      y = out;
    } else {
      for (int k = 0; k < kInputs; ++k) {
        x[k] = xBuf_[k].Get<ComputeT>();
        Cast(x[k], in_[k], RoundMode::CAST_NONE, n);
      }
      y = yBuf_.Get<ComputeT>();
    }
    // Scratch for the +inf test, in buffers this tile does not otherwise use: with casts, yBuf_ (until
    // the first Mul) and the I/O-dtype input queue in_[0] (already cast) for the bitmasks; without,
    // the unused fp32 buffers xBuf_.
    LocalTensor<ComputeT> absBuf;
    LocalTensor<uint8_t> mask;
    if constexpr (IsSame<T, ComputeT>::value) {
      absBuf = xBuf_[1].Get<ComputeT>();
      mask = xBuf_[0].Get<uint8_t>();
    } else {
      absBuf = y;
      mask = in_[0].template ReinterpretCast<uint8_t>();
    }
    Hypot<ComputeT>(y, x[0], x[1], absBuf, mask, n);
    if constexpr (!IsSame<T, ComputeT>::value) {
      Cast(out, y, RoundMode::CAST_RINT, n);
    }
    outQ_.EnQue(out);
  }

  // y = sqrt(a^2 + b^2), and +inf where |a| or |b| is +inf even if the other is NaN (C99 hypot, as
  // torch.hypot). Clobbers b (squared in place), absBuf and the two bitmasks in `mask`.
  template <class C>
  __aicore__ inline void Hypot(const LocalTensor<C>& y, const LocalTensor<C>& a, const LocalTensor<C>& b,
                               const LocalTensor<C>& absBuf, const LocalTensor<uint8_t>& mask, uint32_t n) {
    const int32_t cnt = static_cast<int32_t>(n);
    // bf16 (the naive bf16 variant only) has no Compare/Select: that hypothetical kernel skips the inf rule
    constexpr bool kInfRule = IsSame<C, float>::value || IsSame<C, half>::value;
    // Compares counts a multiple of 256 bytes: past n it reads padding whose mask bits Select never uses
    constexpr uint32_t kLanes = 256 / sizeof(C);
    const uint32_t cmpCnt = (n + kLanes - 1) / kLanes * kLanes;
    const uint32_t mask1Off = ((tileLen_ + 256) / 8 + 31) / 32 * 32;  // bytes, 32-byte aligned
    if constexpr (kInfRule) {
      const C inf = static_cast<C>(__builtin_inff());
      Abs(absBuf, a, cnt);
      Compares(mask, absBuf, inf, CMPMODE::NE, cmpCnt);              // bit 1: |a| != +inf (NaN too)
      Abs(absBuf, b, cnt);
      Compares(mask[mask1Off], absBuf, inf, CMPMODE::NE, cmpCnt);    // bit 1: |b| != +inf
    }
    Mul(y, a, a, cnt);                // a^2
    Mul(b, b, b, cnt);                // b^2, in place (full overlap is allowed)
    Add(y, y, b, cnt);
    Sqrt(y, y, cnt);
    if constexpr (kInfRule) {
      const C inf = static_cast<C>(__builtin_inff());
      Select(y, mask, y, inf, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);           // |a| == +inf -> +inf
      Select(y, mask[mask1Off], y, inf, SELMODE::VSEL_TENSOR_SCALAR_MODE, n); // |b| == +inf -> +inf
    }
  }

  __aicore__ inline void CopyOut(int o, uint64_t off, uint32_t n) {
    LocalTensor<T> out = outQ_.DeQue<T>();
    DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(outGm_[o][off], out, params);
    outQ_.FreeTensor(out);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_[kInputs];
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> xBuf_[kInputs], yBuf_;
  GlobalTensor<T> inGm_[kInputs], outGm_[1];
  LocalTensor<T> in_[kInputs];
  HypotFP32TilingData td_;
  uint64_t len_ = 0;
  uint32_t tileLen_ = 0;
};

}  // namespace hypot_fp32_impl

extern "C" __global__ __aicore__ void hypot_fp32(GM_ADDR x, GM_ADDR other, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(HypotFP32TilingData, td, tiling);
  hypot_fp32_impl::Kernel<DTYPE_X> op;
  op.Init(x, other, y, td);
  op.Process();
}
