// CANN's lib/activation/swish.h (asc-devkit 82b89a15 include/adv_api/activation/swish.h:17-26; page
// docs/zh/api/SIMD-API/高阶API/激活函数/Swish接口/Swish.md): template <typename T, bool isReuseSource = false>
// Swish(dstLocal, srcLocal, uint32_t dataSize, const T scalarValue), half and float: x / (1 + exp(-beta x)), the
// product -beta x formed with beta rounded to T (impl/adv_api/detail/activation/swish/swish_common_impl.h:24-46).
// No sharedTmpBuffer: GetSwishTmpSize reports 0 (impl/adv_api/tiling/activation/swish_tiling.cpp).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
template <typename T, bool isReuseSource = false>
void Swish(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize, const T scalarValue,
           OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: Swish supports half and float (Swish.md)");
  const float nb = -::opkit_emu::to_f(scalarValue);
  ::opkit_emu::adv_unary<T>("Swish", "GetSwishTmpSize", dstLocal, srcLocal, nullptr, dataSize, 0,
                            [nb](float x) { return x / (1.0f + ::opkit_emu::hm::exp(nb * x)); }, loc);
}
}  // namespace AscendC
