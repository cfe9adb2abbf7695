// CANN's lib/math/clamp.h (asc-devkit 82b89a15 include/adv_api/math/clamp.h:20-70; pages
// docs/zh/api/SIMD-API/高阶API/数学计算/Clamp接口/{ClampMin,ClampMax}.md): template <typename T, bool isReuseSource>
// ClampMin / ClampMax(dst, src, [sharedTmpBuffer,] const T scalar, calCount), half and float on A2. The A2 code is the
// basic Maxs / Mins (impl/adv_api/detail/math/clamp/clamp_common_impl.h:33-44), so the result is exact (NaN kept as
// the basic Maxs / Mins keep it). Minimum sharedTmpBuffer: float 64, half 128 bytes
// (impl/adv_api/tiling/math/clamp_tiling_impl.cpp:12-18, GetClampMaxMinTmpSize). Clamp<config>(dst, src, min, max,
// count) is Ascend 950 only: not declared (below).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

#define OPKIT_EMU_CLAMP(NAME, OP)                                                                                    \
  namespace AscendC {                                                                                                \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                        \
            const LocalTensor<uint8_t>& sharedTmpBuffer, const T scalar, const uint32_t calCount, OPKIT_LOC) {       \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float (" #NAME ".md)"); \
    ::opkit_emu::adv_elementwise<T>(#NAME, "GetClampMaxMinTmpSize", dstTensor, &srcTensor, nullptr, &sharedTmpBuffer,  \
                                    calCount, sizeof(T) == 4 ? 64 : 128,                                             \
                                    [&](T a, T) { return ::opkit_emu::OP::ap(a, scalar); }, loc);                    \
  }                                                                                                                  \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const T scalar,                        \
            const uint32_t calCount, OPKIT_LOC) {                                                                    \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float (" #NAME ".md)"); \
    ::opkit_emu::adv_elementwise<T>(#NAME, "GetClampMaxMinTmpSize", dstTensor, &srcTensor, nullptr, nullptr,         \
                                    calCount, 0, [&](T a, T) { return ::opkit_emu::OP::ap(a, scalar); }, loc);       \
  }                                                                                                                  \
  }
OPKIT_EMU_CLAMP(ClampMin, OpMax)  // ClampMin(x, s) = max(x, s)
OPKIT_EMU_CLAMP(ClampMax, OpMin)

// Clamp<config>(dst, src, min, max, count) is Ascend 950 only (clamp.h:150-160, Clamp.md). CANN's header declares it on
// every chip with an empty body off the 950 (a call on A2 silently does nothing); it is not declared here, so a call is
// an ordinary compile error naming it -- and a kernel's own `Clamp` (a functor, as public kernels written before
// CANN 9 have, under `using namespace AscendC`) is not made ambiguous (tests/emulator/test_compat.cpp).
