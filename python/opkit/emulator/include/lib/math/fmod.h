// CANN's lib/math/fmod.h (asc-devkit 82b89a15 include/adv_api/math/fmod.h:58-90, the A2 forms; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Fmod接口/Fmod.md): template <typename T, bool isReuseSource = false>
// Fmod(dst, src0, src1, [sharedTmpBuffer,] [calCount]) -- the four forms -- half and float. The A2 code
// (impl/adv_api/detail/math/fmod/fmod_common_impl.h:33-66) is Div, Trunc, Mul, Sub in float, each rounded to
// float (half cast in and the result cast back): a - trunc(a / b) * b, which is what this computes -- not C's exact
// fmod (a quotient rounded up to the next integer gives a remainder of the wrong sign or b itself). The Ascend 950
// form with `const FmodConfig& config` is not on A2 (Fmod.md "config"). Minimum sharedTmpBuffer: (Trunc's factor +
// extra) x 256 bytes, float 1 x 256, half (2 + 6) x 256 (impl/adv_api/tiling/math/fmod_tiling_impl.cpp:6-28).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
inline float fmod_like_cann(float a, float b) {
  volatile float q = a / b;  // each step rounded to float, as the vector unit's Div / Mul / Sub
  volatile float m = static_cast<float>(hm::trunc(q)) * b;  // exact: a float's trunc is a float
  return a - m;
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: Fmod supports half and float (Fmod.md)");
  ::opkit_emu::adv_elementwise<T>(
      "Fmod", "GetFmodMaxMinTmpSize", dstTensor, &src0Tensor, &src1Tensor, &sharedTmpBuffer, calCount,
      sizeof(T) == 4 ? 256 : 2048,
      [](T a, T b) { return ::opkit_emu::from_f<T>(::opkit_emu::fmod_like_cann(::opkit_emu::to_f(a), ::opkit_emu::to_f(b))); },
      loc);
}
template <typename T, bool isReuseSource = false>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          const uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: Fmod supports half and float (Fmod.md)");
  ::opkit_emu::adv_elementwise<T>(
      "Fmod", "GetFmodMaxMinTmpSize", dstTensor, &src0Tensor, &src1Tensor, nullptr, calCount, 0,
      [](T a, T b) { return ::opkit_emu::from_f<T>(::opkit_emu::fmod_like_cann(::opkit_emu::to_f(a), ::opkit_emu::to_f(b))); },
      loc);
}
template <typename T, bool isReuseSource = false>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          const LocalTensor<uint8_t>& sharedTmpBuffer, OPKIT_LOC) {
  Fmod<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, sharedTmpBuffer, src0Tensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
void Fmod(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
          OPKIT_LOC) {
  Fmod<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, src0Tensor.GetSize(), loc);
}
// The Ascend 950 form (fmod.h:23-50): its config types exist (include/adv_api/math/fmod_utils.h), the call is a
// named compile error. No default for `config`, so a plain Fmod(...) call never considers it.
inline constexpr uint32_t FMOD_ITERATION_NUM_MAX = 11;
enum class FmodAlgo { NORMAL = 0, ITERATION_COMPENSATION = 1 };
struct FmodConfig {
  FmodAlgo algo = FmodAlgo::NORMAL;
  uint32_t iterationNum = FMOD_ITERATION_NUM_MAX;
};
inline constexpr FmodConfig DEFAULT_FMOD_CONFIG = {FmodAlgo::NORMAL, FMOD_ITERATION_NUM_MAX};
template <typename T, bool isReuseSource, const FmodConfig& config, class... Rest>
void Fmod(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const Rest&...) {
  static_assert(sizeof(T) == 0,  // dependent: fails only when called
                "opkit emulator: Fmod<T, isReuseSource, config> (FmodConfig) is Ascend 950 only (Fmod.md, 'config'); "
                "on Atlas A2 call Fmod<T, isReuseSource>");
}
}  // namespace AscendC
