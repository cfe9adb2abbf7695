// Host side of CANN's WelfordFinalize work buffer (declared in asc-devkit 82b89a15 include/adv_api/normalization/
// welfordfinalize_tiling.h; the A2 branch of impl/adv_api/tiling/normalization/welfordfinalize_tiling_impl.cpp:
// 43-52, read, not copied): srcShape is [abLength], abLength a positive multiple of 8; the minimum is four 64-float
// buffers (1024 bytes), the maximum 2 x 64 + 2 x abLength floats when abLength > 64 (else the minimum). The kernel
// (lib/normalization/welfordfinalize.h) checks the minimum.
#pragma once
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"

namespace AscendC {
inline void GetWelfordFinalizeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                            const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  (void)typeSize;
  (void)isReuseSource;
  constexpr uint32_t kUnit = 64, kFloat = 4;
  const int64_t ab = srcShape.GetDimNum() == 1 ? srcShape.GetDim(0) : -1;
  if (ab <= 0 || ab % 8 != 0) {
    std::fprintf(stderr, "[WelfordFinalize][GetWelfordFinalizeMaxMinTmpSize] srcShape must be one dimension, "
                         "abLength a positive multiple of 8 (32-byte aligned)\n");
    return;
  }
  minValue = kUnit * 4 * kFloat;
  maxValue = ab <= kUnit ? minValue : static_cast<uint32_t>((kUnit * 2 + ab * 2) * kFloat);
}
}  // namespace AscendC
