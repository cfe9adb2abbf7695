// Host side of CANN's Normalize work buffer (declared in asc-devkit 82b89a15 include/adv_api/normalization/
// normalize_tiling.h:33-35; the A2 branch of impl/adv_api/tiling/normalization/normalize_tiling_impl.cpp:23-90, read,
// not copied): srcShape [A, R], R padded to 32 bytes of typeSizeT; min = max(align32(A x 4), 2 (typeSizeU 4) or
// 4 x align32(Rpad x 4)), max = 2 x align32(Rpad x 4) + 2 x align32(align8(A) x Rpad x 4). isComputeRstd must be
// true and isOnlyOutput false, as CANN asserts. The kernel (lib/normalization/normalize.h) checks the minimum.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"

namespace AscendC {
inline void GetNormalizeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSizeU, const uint32_t typeSizeT,
                                      const bool isReuseSource, const bool isComputeRstd, const bool isOnlyOutput,
                                      uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  if (!isComputeRstd || isOnlyOutput || typeSizeU == 0 || typeSizeT == 0 || srcShape.GetDimNum() != 2) {
    std::fprintf(stderr, "[Normalize][GetNormalizeMaxMinTmpSize] srcShape must be [A, R], the type sizes non-zero, "
                         "isComputeRstd true and isOnlyOutput false\n");
    return;
  }
  auto align32 = [](uint32_t bytes) { return (bytes + 31) / 32 * 32; };
  const uint32_t a = static_cast<uint32_t>(srcShape.GetDim(0)), r = static_cast<uint32_t>(srcShape.GetDim(1));
  const uint32_t per = 32 / typeSizeT ? 32 / typeSizeT : 1, rwp = (r + per - 1) / per * per;
  const uint32_t rb = align32(rwp * 4);
  maxValue = 2 * rb + 2 * align32((a + 7) / 8 * 8 * rwp * 4);
  minValue = std::max(align32(a * 4), (typeSizeU == 4 ? 2u : 4u) * rb);
}
}  // namespace AscendC
