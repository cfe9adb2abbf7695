// Compound (fused) vector instructions, count form: Axpy, FusedMulAdd, MulAddDst, FusedMulAddRelu /
// MulAddRelu, AddRelu, SubRelu. Doc: asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/复合计算/
// {Axpy,FusedMulAdd,MulAddDst,MulAddRelu,AddRelu,SubRelu}.md (mirror-cann/asc-devkit 82b89a15):
//  - Axpy:            dst = scalar * src + dst     (A2: half->half, float->float, half->float)
//  - MulAddDst:       dst = src0 * src1 + dst      (A2: half->half, float->float, half->float)
//  - FusedMulAdd:     dst = src0 * dst + src1      (half, float)
//  - FusedMulAddRelu: dst = Relu(src0 * dst + src1) (half, float; MulAddRelu is the same instruction)
//  - AddRelu / SubRelu: dst = Relu(src0 +- src1)   (int16_t, half, float)
// Each element is computed in float (integers: wrapping int16 arithmetic) and rounded once to dst's type.
// Whether the device rounds the product before the add is not documented: for float operands the result may
// differ from the device in the last bit (docs/emulator.md "Numerics").
// The level-0 forms (mask / repeatTime) are in level0_mixed.h.
#pragma once
#include "opkit_emu/vector.h"

namespace opkit_emu {
template <class D, class S> inline constexpr bool is_axpy_pair =
    (std::is_same<D, S>::value && (std::is_same<S, half>::value || std::is_same<S, float>::value)) ||
    (std::is_same<D, float>::value && std::is_same<S, half>::value);
template <class T> inline constexpr bool is_hf_t = std::is_same<T, half>::value || std::is_same<T, float>::value;
template <class T> inline constexpr bool is_addrelu_t = is_hf_t<T> || std::is_same<T, int16_t>::value;

inline float relu_f(float x) { return (x > 0.0f || x != x) ? x : 0.0f; }
// AddRelu (SIGN 1) / SubRelu (SIGN -1) of one element: wrapping int16 arithmetic, or float rounded once.
template <class T, int SIGN>
inline T op_relu(T x, T y) {
  if constexpr (std::is_integral<T>::value) {
    const T r = static_cast<T>(static_cast<uint16_t>(static_cast<int32_t>(x) + SIGN * static_cast<int32_t>(y)));
    return r > 0 ? r : T(0);
  } else {
    return from_f<T>(relu_f(SIGN > 0 ? fadd(to_f(x), to_f(y)) : fsub(to_f(x), to_f(y))));
  }
}

// dst[i] = f(a[i], b[i], dst[i]) over count elements; a, b of type S, dst of type D (a may be null for Axpy).
template <class D, class S, class F>
inline void fused(const char* call, const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>* a,
                  const AscendC::LocalTensor<S>* b, int64_t count, bool reads_dst, SrcLoc loc, F f) {
  using Big = std::conditional_t<(sizeof(D) > sizeof(S)), D, S>;
  if (!vec_prologue<Big>(VecOp::Other, call, count, loc)) return;
  ApiCall c(Pipe::V, call, loc);
  c.dst(dst, count);
  if (a) c.src(*a, count, "src0");
  if (b) c.src(*b, count, "src1");
  if (reads_dst) c.src(dst, count, "dst");
  c.commit();
  D* d = dst.data();
  const S* x = a ? a->data() : nullptr;
  const S* y = b ? b->data() : nullptr;
  for (int64_t i = 0; i < count; ++i) d[i] = f(x ? x[i] : S(), y ? y[i] : S(), d[i]);
}
}  // namespace opkit_emu

namespace AscendC {

template <class T, class U>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const int32_t& count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_axpy_pair<T, U>, "opkit emulator: Axpy on A2: half->half, float->float, half->float");
  const float s = to_f(scalarValue);
  fused<T, U>("Axpy", dst, &src, nullptr, count, true, loc,
              [s](U x, U, T d) { return from_f<T>(fadd(fmul(to_f(x), s), to_f(d))); });
}

template <class T, class U>
void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
               const int32_t& count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_axpy_pair<T, U>, "opkit emulator: MulAddDst on A2: half->half, float->float, half->float");
  fused<T, U>("MulAddDst", dst, &src0, &src1, count, true, loc,
              [](U x, U y, T d) { return from_f<T>(fadd(fmul(to_f(x), to_f(y)), to_f(d))); });
}

#define OPKIT_EMU_FMA(NAME, RELU)                                                                               \
  template <class T>                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                 \
            const int32_t& count, OPKIT_LOC) {                                                                  \
    using namespace opkit_emu;                                                                                  \
    static_assert(is_hf_t<T>, "opkit emulator: " #NAME " supports half and float on this chip");              \
    fused<T, T>(#NAME, dst, &src0, &src1, count, true, loc, [](T x, T y, T d) {                                \
      const float r = fadd(fmul(to_f(x), to_f(d)), to_f(y));                                                        \
      return from_f<T>(RELU ? relu_f(r) : r);                                                                   \
    });                                                                                                         \
  }
OPKIT_EMU_FMA(FusedMulAdd, false)
OPKIT_EMU_FMA(FusedMulAddRelu, true)
OPKIT_EMU_FMA(MulAddRelu, true)
#undef OPKIT_EMU_FMA

#define OPKIT_EMU_OP_RELU(NAME, SIGN)                                                                           \
  template <class T>                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                 \
            const int32_t& count, OPKIT_LOC) {                                                                  \
    using namespace opkit_emu;                                                                                  \
    static_assert(is_addrelu_t<T>, "opkit emulator: " #NAME " supports int16_t, half and float on this chip"); \
    fused<T, T>(#NAME, dst, &src0, &src1, count, false, loc, [](T x, T y, T) { return op_relu<T, SIGN>(x, y); }); \
  }
OPKIT_EMU_OP_RELU(AddRelu, 1)
OPKIT_EMU_OP_RELU(SubRelu, -1)
#undef OPKIT_EMU_OP_RELU

}  // namespace AscendC
