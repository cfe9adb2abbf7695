// CANN's lib/activation/gelu.h (asc-devkit 82b89a15 include/adv_api/activation/gelu.h:38-123; pages
// docs/zh/api/SIMD-API/高阶API/激活函数/Gelu接口/{Gelu,FasterGelu,FasterGeluV2}.md, all three on A2):
//   template <typename T, bool highPrecision = false, bool highPerformance = false>
//   Gelu / FasterGelu / FasterGeluV2(dst, src, [sharedTmpBuffer,] dataSize), half and float.
// Formulas of the A2 implementation (impl/adv_api/detail/activation/gelu/gelu_impl.h):
//   Gelu         x / (1 + exp(-|y|)) * exp(min(y, 0)), y = 1.5957691216057308 * (x + 0.044715 x^3) (:27-93): the
//                tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) written to avoid overflow
//   FasterGelu   x / (1 + exp(-1.702 x)) (:99-119)
//   FasterGeluV2 x * (sgn(x + 1e-12) * (-0.1444 (min(|0.7071 x|, 1.769) - 1.769)^2 + 0.5) + 0.5) (:121-182)
// Here each is computed in float and rounded to T (CANN computes half in half unless highPrecision; the results
// agree within half's rounding). Minimum sharedTmpBuffer: 3 x 256 bytes for every form and type
// (impl/adv_api/tiling/activation/gelu_tiling_impl.cpp:15-20, GetGeluMaxMinTmpSize).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
inline float gelu_tanh(float x) {
  const float y = 1.5957691216057308f * (x + 0.044715f * x * x * x);
  return x / (1.0f + hm::exp(-__builtin_fabsf(y))) * hm::exp(y < 0.0f ? y : 0.0f);
}
inline float gelu_faster(float x) { return x / (1.0f + hm::exp(-1.702f * x)); }
inline float gelu_faster_v2(float x) {
  const float a = __builtin_fabsf(0.7071f * x);
  const float c = (a < 1.769f ? a : 1.769f) - 1.769f;
  const float x1 = -0.1444f * c * c + 0.5f;
  const float s = x + 1e-12f;
  const float sgn = s > 0 ? 1.0f : (s < 0 ? -1.0f : s / __builtin_fabsf(s));  // 0/0 at s == 0, as CANN's Div
  return x * (sgn * x1 + 0.5f);
}
}  // namespace opkit_emu

#define OPKIT_EMU_GELU_FORMS(NAME, FN)                                                                               \
  namespace AscendC {                                                                                                \
  template <typename T, bool highPrecision = false, bool highPerformance = false>                                    \
  void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,                                          \
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t dataSize, OPKIT_LOC) {                       \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float (" #NAME ".md)"); \
    ::opkit_emu::adv_unary<T>(#NAME, "GetGeluMaxMinTmpSize", dstLocal, srcLocal, &sharedTmpBuffer, dataSize, 768,    \
                              [](float x) { return FN(x); }, loc);                                                   \
  }                                                                                                                  \
  template <typename T, bool highPrecision = false, bool highPerformance = false>                                    \
  void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dataSize, OPKIT_LOC) {    \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float (" #NAME ".md)"); \
    ::opkit_emu::adv_unary<T>(#NAME, "GetGeluMaxMinTmpSize", dstLocal, srcLocal, nullptr, dataSize, 0,               \
                              [](float x) { return FN(x); }, loc);                                                   \
  }                                                                                                                  \
  }
OPKIT_EMU_GELU_FORMS(Gelu, ::opkit_emu::gelu_tanh)
OPKIT_EMU_GELU_FORMS(FasterGelu, ::opkit_emu::gelu_faster)
OPKIT_EMU_GELU_FORMS(FasterGeluV2, ::opkit_emu::gelu_faster_v2)
