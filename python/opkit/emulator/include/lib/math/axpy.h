// CANN's lib/math/axpy.h (asc-devkit 82b89a15 include/adv_api/math/axpy.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Axpy接口/Axpy.md): the advanced Axpy with a sharedTmpBuffer,
// dst = dst + src * scalar, template <T, U, isReuseSource>; the basic API's Axpy (without the buffer) is
// opkit_emu/fused.h, and this form computes what it computes. Minimum sharedTmpBuffer by the source's type U: float
// none -- CANN's A2 code calls the basic Axpy and never touches the buffer (impl/adv_api/detail/math/axpy/
// axpy_common_impl.h:153-166) and GetAxpyMaxMinTmpSize reports 0 (impl/adv_api/tiling/math/axpy_tiling_impl.cpp:
// 44-52) --, half 4 x 256 B (:23-37).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/fused.h"

namespace AscendC {
template <typename T, typename U, bool isReuseSource = false>
void Axpy(const LocalTensor<T>& dstTensor, const LocalTensor<U>& srcTensor, const U scalarValue,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_check_tmp("Axpy", "GetAxpyMaxMinTmpSize", &sharedTmpBuffer,
                             ::opkit_emu::adv_min_tmp<U>({0, 0, 1024}, isReuseSource), loc);
  Axpy(dstTensor, srcTensor, scalarValue, static_cast<int32_t>(calCount), loc);
}
}  // namespace AscendC
