// Host side of CANN's BatchNorm tiling (asc-devkit 82b89a15 include/adv_api/normalization/batchnorm_tiling.h, the
// struct batchnorm_tilingdata.h:16-37), reached through tiling/tiling_api.h: GetBatchNormMaxMinTmpSize and
// GetBatchNormNDTilingInfo, written after impl/adv_api/tiling/normalization/batchnorm_tiling_impl.cpp:37-243 (read,
// not copied). Both return false on what CANN refuses: isBasicBlock without S x H % 64 == 0 and originB % 8 == 0
// (:42-48, :138-140); the tiling also a shape not [B, S, H], S x H x typeSize not 32-byte aligned (:50-75), a buffer
// below the minimum or too small for one 8 (float) / 16 (half) column of every batch row (:159-190). The kernel runs
// BatchNorm on the emulator (lib/normalization/batchnorm.h).
#pragma once
#include <cstdint>

#include "layernorm_tiling.h"  // AscendC::TensorShape
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(BatchNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, originalBLength);
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize);
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, tmpBufSize);
TILING_DATA_FIELD_DEF(uint32_t, oneTmpSize);
TILING_DATA_FIELD_DEF(uint32_t, firstTmpStartPos);
TILING_DATA_FIELD_DEF(uint32_t, secondTmpStartPos);
TILING_DATA_FIELD_DEF(uint32_t, thirdTmpStartPos);
TILING_DATA_FIELD_DEF(uint32_t, loopRound);
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize);
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos);
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailSize);
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailPos);
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength);
TILING_DATA_FIELD_DEF(uint32_t, shCurLength);
TILING_DATA_FIELD_DEF(float, firstDimValueBack);
TILING_DATA_FIELD_DEF(uint32_t, castHalfRepStride);
TILING_DATA_FIELD_DEF(uint32_t, shCurLengthBlockNum);
TILING_DATA_FIELD_DEF(uint32_t, castHalfOutRepStride);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace batchnorm_detail {
inline uint32_t align32(uint32_t n) { return (n + 31) / 32 * 32; }
}  // namespace batchnorm_detail

// B from originSrcShape, S and H from srcShape, as CANN reads them (:84-88, :104-108)
inline bool GetBatchNormMaxMinTmpSize(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                      const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                      uint32_t& minValue, const bool isBasicBlock = false) {
  using batchnorm_detail::align32;
  (void)isReuseSource;  // CANN's sizes ignore it (:81-83, :103)
  const uint32_t b = uint32_t(originSrcShape.GetDim(0)), sh = uint32_t(srcShape.GetDim(1) * srcShape.GetDim(2));
  if (isBasicBlock && (sh % 64 || b % 8)) return false;
  const uint32_t mv = align32(sh * 4);
  maxValue = 3 * align32(b * sh * 4) + 2 * mv;
  const uint32_t per = isBasicBlock ? b * 64 * 4 : typeSize == 2 ? b * 64 : b * 32;
  minValue = 3 * per + 2 * mv;
  return true;
}

inline bool GetBatchNormNDTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                     const uint32_t stackBufferByteSize, const uint32_t typeSize,
                                     const bool isReuseSource, optiling::BatchNormTiling& tilling,
                                     const bool isBasicBlock = false) {
  if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
  const uint32_t s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  const uint32_t b = uint32_t(originSrcShape.GetDim(0));
  if (s * h * typeSize % 32) return false;
  uint32_t mx = 0, mn = 0;
  if (!GetBatchNormMaxMinTmpSize(srcShape, originSrcShape, typeSize, isReuseSource, mx, mn, isBasicBlock) ||
      stackBufferByteSize < mn)
    return false;
  const uint32_t total = b * s * h, meanVarSize = s * h;
  const uint32_t mvSize = (meanVarSize + 7) / 8 * 8;
  const uint32_t mvTotal = typeSize == 4 ? 0 : 2 * mvSize;  // float writes mean / variance in place (:175-177)
  const uint32_t tmpBufSize = stackBufferByteSize / 4;
  uint32_t one = (tmpBufSize - mvTotal) / 3;
  const uint32_t unit = b * (typeSize == 4 ? 8 : 16);
  one = one / unit * unit;
  if (one > total) one = total;
  if (one == 0) return false;
  uint32_t shCur = one / b;
  if (isBasicBlock && shCur % 64) {
    shCur = shCur / 64 * 64;
    one = shCur * b;
  }
  const uint32_t tail = total % one;  // (:200-204)
  tilling.set_originalBLength(b);
  tilling.set_meanVarSize(meanVarSize);
  tilling.set_meanTmpTensorPos(0);
  tilling.set_varianceTmpTensorPos(mvSize);
  tilling.set_tmpBufSize(tmpBufSize);
  tilling.set_oneTmpSize(one);
  tilling.set_firstTmpStartPos(mvTotal);
  tilling.set_secondTmpStartPos(mvTotal + one);
  tilling.set_thirdTmpStartPos(mvTotal + 2 * one);
  tilling.set_loopRound(total / one);
  tilling.set_inputTailSize(tail);
  tilling.set_inputTailPos((total - tail) / b);
  tilling.set_meanVarTailSize(tail / b);
  tilling.set_meanVarTailPos(meanVarSize - tail / b);
  tilling.set_bshCurLength(one);
  tilling.set_shCurLength(shCur);
  tilling.set_firstDimValueBack(1.0f / static_cast<float>(b));
  tilling.set_castHalfRepStride(8 / 2);
  tilling.set_shCurLengthBlockNum(shCur / 8);
  tilling.set_castHalfOutRepStride(meanVarSize / 16);
  return true;
}
// the overload filling the kernel-side struct (:233-243: saved even when refused)
inline bool GetBatchNormNDTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                     const uint32_t stackBufferByteSize, const uint32_t typeSize,
                                     const bool isReuseSource, AscendC::tiling::BatchNormTiling& tilling,
                                     const bool isBasicBlock = false) {
  optiling::BatchNormTiling t;
  const bool ok =
      GetBatchNormNDTilingInfo(srcShape, originSrcShape, stackBufferByteSize, typeSize, isReuseSource, t, isBasicBlock);
  t.SaveToBuffer(&tilling, sizeof(tilling));
  return ok;
}
}  // namespace AscendC
