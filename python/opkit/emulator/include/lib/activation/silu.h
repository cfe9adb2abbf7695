// CANN's lib/activation/silu.h (asc-devkit 82b89a15 include/adv_api/activation/silu.h:18-26; page
// docs/zh/api/SIMD-API/高阶API/激活函数/Silu接口/Silu.md): template <typename T, bool isReuseSource = false>
// Silu(dstLocal, srcLocal, uint32_t dataSize), half and float: x / (1 + exp(-x))
// (impl/adv_api/detail/activation/silu/silu_common_impl.h:24-32). No sharedTmpBuffer: GetSiluTmpSize reports 0
// (impl/adv_api/tiling/activation/silu_tiling.cpp). Computed in float, rounded to T.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
template <typename T, bool isReuseSource = false>
void Silu(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: Silu supports half and float (Silu.md)");
  ::opkit_emu::adv_unary<T>("Silu", "GetSiluTmpSize", dstLocal, srcLocal, nullptr, dataSize, 0,
                            [](float x) { return x / (1.0f + ::opkit_emu::hm::exp(-x)); }, loc);
}
}  // namespace AscendC
