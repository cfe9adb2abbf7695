// CANN's lib/math/exp.h (asc-devkit 82b89a15 include/adv_api/math/exp.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Exp接口/Exp.md): the advanced Exp, template <T, taylorExpandLevel,
// isReuseSource>, half and float. taylorExpandLevel (the Taylor terms CANN adds to its integer-part power of e) has no
// default, so a call always names it and never reaches the basic API's Exp<T, isSetMask>. Minimum sharedTmpBuffer:
// float 3 (2 with isReuseSource) x 256 B, half 4 x 256 B (impl/adv_api/tiling/math/exp_tiling_impl.cpp:40-47).
// The result is the host's expf rounded to T, whatever the level (CANN's error shrinks with the level).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: Exp supports half and float on this chip");
  ::opkit_emu::adv_unary<T>("Exp", "GetExpMaxMinTmpSize", dstLocal, srcLocal, &sharedTmpBuffer, calCount,
                            ::opkit_emu::adv_min_tmp<T>({768, 512, 1024}, isReuseSource),
                            [](float x) { return ::opkit_emu::hm::exp(x); }, loc);
}
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: Exp supports half and float on this chip");
  ::opkit_emu::adv_unary<T>("Exp", "GetExpMaxMinTmpSize", dstLocal, srcLocal, nullptr, calCount, 0,
                            [](float x) { return ::opkit_emu::hm::exp(x); }, loc);
}
}  // namespace AscendC
