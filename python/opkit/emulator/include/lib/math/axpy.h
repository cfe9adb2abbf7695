// CANN's lib/math/axpy.h (asc-devkit 82b89a15 include/adv_api/math/axpy.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Axpy接口/Axpy.md): the advanced Axpy with a sharedTmpBuffer,
// dst = dst + src * scalar, template <T, U, isReuseSource>; the basic API's Axpy (without the buffer) is
// opkit_emu/fused.h, and this form computes what it computes. Minimum sharedTmpBuffer: float 1 x 256 B, half
// 4 x 256 B by the source's size (impl/adv_api/tiling/math/axpy_tiling_impl.cpp:23-37).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/fused.h"

namespace AscendC {
template <typename T, typename U, bool isReuseSource = false>
void Axpy(const LocalTensor<T>& dstTensor, const LocalTensor<U>& srcTensor, const U scalarValue,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_check_tmp("Axpy", "GetAxpyMaxMinTmpSize", &sharedTmpBuffer,
                             ::opkit_emu::adv_min_tmp<U>({256, 256, 1024}, isReuseSource), loc);
  Axpy(dstTensor, srcTensor, scalarValue, static_cast<int32_t>(calCount), loc);
}
}  // namespace AscendC
