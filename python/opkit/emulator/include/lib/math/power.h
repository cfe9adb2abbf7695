// CANN's lib/math/power.h (asc-devkit 82b89a15 include/adv_api/math/power.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Power接口/Power.md): Power(x, y) with tensor^tensor, tensor^scalar and
// scalar^tensor operands, each with and without sharedTmpBuffer and calCount; half, float, int32_t on A2 (the page's
// A2 type list). Floating types: the page's exp(y * ln(x)) is computed as the host's powf rounded to T (negative
// bases with integral exponents as powf gives them); int32_t: exact integer power, a negative exponent gives 0
// except for bases 1 and -1 (integer division semantics; the page does not say). Minimum sharedTmpBuffer
// (impl/adv_api/tiling/math/power_tiling_impl.cpp:24-43,116-138, the DAV_2201 table): tensor^tensor float
// 4 x 256 + 256 B, half 14 x 256 B, int32 6 x 256 B; with a scalar operand float 5 x 256 + 256 B, half 14 x 256 B,
// int32 7 x 256 B.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
template <class T>
inline constexpr bool is_power_t = is_adv_float_t<T> || std::is_same<T, int32_t>::value;

template <class T>
T power_elem(T x, T y) {
  if constexpr (std::is_same<T, int32_t>::value) {
    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
    int64_t r = 1, b = x;
    for (int32_t e = y; e; e >>= 1, b = static_cast<int32_t>(b * b)) {
      if (e & 1) r = static_cast<int32_t>(r * b);
    }
    return static_cast<int32_t>(r);
  } else {
    return from_f<T>(::opkit_emu::hm::pow(to_f(x), to_f(y)));
  }
}
template <class T>
uint32_t power_min_tmp(bool tensor_tensor) {
  if (std::is_same<T, int32_t>::value) return tensor_tensor ? 6 * 256 : 7 * 256;
  if (sizeof(T) == 4) return (tensor_tensor ? 4 * 256 : 5 * 256) + 256;
  return 14 * 256;
}
template <class T>
void power(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>* t0, const T* s0,
           const AscendC::LocalTensor<T>* t1, const T* s1, const AscendC::LocalTensor<uint8_t>* tmp, uint32_t n,
           SrcLoc loc) {
  static_assert(is_power_t<T>, "opkit emulator: Power supports half, float and int32_t on this chip");
  const T a = s0 ? *s0 : T{}, b = s1 ? *s1 : T{};
  adv_elementwise<T>("Power", "GetPowerMaxMinTmpSize", dst, t0 ? t0 : t1, t0 && t1 ? t1 : nullptr, tmp, n,
                     power_min_tmp<T>(t0 && t1), [&](T x, T y) {
                       if (t0 && t1) return power_elem<T>(x, y);
                       return t0 ? power_elem<T>(x, b) : power_elem<T>(a, x);
                     }, loc);
}
}  // namespace opkit_emu

namespace AscendC {
// SRC0 / SRC1: `const LocalTensor<T>&` or `const T&`; T0, S0 / T1, S1: each operand as a tensor* or a scalar*.
#define OPKIT_EMU_POWER_FORMS(SRC0, SRC1, T0, S0, T1, S1)                                                                   \
  template <typename T, bool isReuseSource = false>                                                                \
  void Power(const LocalTensor<T>& dstTensor, SRC0 src0, SRC1 src1, const LocalTensor<uint8_t>& sharedTmpBuffer,   \
             uint32_t calCount, OPKIT_LOC) {                                                                        \
    ::opkit_emu::power<T>(dstTensor, T0, S0, T1, S1, &sharedTmpBuffer, calCount, loc);                                     \
  }                                                                                                                \
  template <typename T, bool isReuseSource = false>                                                                \
  void Power(const LocalTensor<T>& dstTensor, SRC0 src0, SRC1 src1, uint32_t calCount, OPKIT_LOC) {                \
    ::opkit_emu::power<T>(dstTensor, T0, S0, T1, S1, nullptr, calCount, loc);                                              \
  }                                                                                                                \
  template <typename T, bool isReuseSource = false>                                                                \
  void Power(const LocalTensor<T>& dstTensor, SRC0 src0, SRC1 src1, const LocalTensor<uint8_t>& sharedTmpBuffer,   \
             OPKIT_LOC) {                                                                                           \
    ::opkit_emu::power<T>(dstTensor, T0, S0, T1, S1, &sharedTmpBuffer, dstTensor.GetSize(), loc);                          \
  }                                                                                                                \
  template <typename T, bool isReuseSource = false>                                                                \
  void Power(const LocalTensor<T>& dstTensor, SRC0 src0, SRC1 src1, OPKIT_LOC) {                                   \
    ::opkit_emu::power<T>(dstTensor, T0, S0, T1, S1, nullptr, dstTensor.GetSize(), loc);                                   \
  }
OPKIT_EMU_POWER_FORMS(const LocalTensor<T>&, const LocalTensor<T>&, &src0, nullptr, &src1, nullptr)
OPKIT_EMU_POWER_FORMS(const LocalTensor<T>&, const T&, &src0, nullptr, nullptr, &src1)
OPKIT_EMU_POWER_FORMS(const T&, const LocalTensor<T>&, nullptr, &src0, &src1, nullptr)
#undef OPKIT_EMU_POWER_FORMS
}  // namespace AscendC
