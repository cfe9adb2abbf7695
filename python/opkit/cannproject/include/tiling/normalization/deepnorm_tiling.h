// Host side of CANN's DeepNorm tiling (asc-devkit 82b89a15 include/adv_api/normalization/deepnorm_tiling.h, the
// struct deepnorm_tilingdata.h: LayerNormTiling's fields), reached through tiling/tiling_api.h:
// GetDeepNormMaxMinTmpSize and GetDeepNormTilingInfo, written after
// impl/adv_api/tiling/normalization/deepnorm_tiling_impl.cpp:36-283 (read, not copied). Both return false (and
// GetDeepNormTilingInfo leaves the tiling untouched) on the arguments CANN refuses: a shape not [B, S, H] with H 32-byte
// aligned and at most 2040, isBasicBlock without H % 64 == 0 and B x S % 8 == 0, an origin shape of other B / S or
// originH outside (0, H] (= H with isBasicBlock), a buffer below the minimum. The kernel runs DeepNorm on the
// emulator (lib/normalization/deepnorm.h).
#pragma once
#include <cstdint>
#include <cstdio>

#include "layernorm_tiling.h"  // AscendC::TensorShape
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(DeepNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, bLength);
TILING_DATA_FIELD_DEF(uint32_t, sLength);
TILING_DATA_FIELD_DEF(uint32_t, hLength);
TILING_DATA_FIELD_DEF(uint32_t, originalHLength);
TILING_DATA_FIELD_DEF(uint32_t, inputXSize);
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize);
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf);
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, meanTmpTensorSize);
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, varianceTmpTensorSize);
TILING_DATA_FIELD_DEF(uint32_t, tmpBufSize);
TILING_DATA_FIELD_DEF(uint32_t, oneTmpSize);
TILING_DATA_FIELD_DEF(uint32_t, firstTmpStartPos);
TILING_DATA_FIELD_DEF(uint32_t, secondTmpStartPos);
TILING_DATA_FIELD_DEF(uint32_t, thirdTmpStartPos);
TILING_DATA_FIELD_DEF(uint32_t, loopRound);
TILING_DATA_FIELD_DEF(uint32_t, inputRoundSize);
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize);
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos);
TILING_DATA_FIELD_DEF(uint32_t, meanVarRoundSize);
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailSize);
TILING_DATA_FIELD_DEF(uint32_t, meanVarTailPos);
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength);
TILING_DATA_FIELD_DEF(uint32_t, bsCurLength);
TILING_DATA_FIELD_DEF(float, lastDimValueBack);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace deepnorm_detail {
inline uint32_t align32(uint32_t n) { return (n + 31) / 32 * 32; }
// CheckDeepNormHostCommon (deepnorm_tiling_impl.cpp:82-115)
inline bool check(const char* fn, const ge::Shape& s, uint32_t typeSize, bool basic) {
  const uint32_t h = s.GetDimNum() == 3 ? uint32_t(s.GetDim(2)) : 0;
  const uint64_t bs = s.GetDimNum() == 3 ? uint64_t(s.GetDim(0) * s.GetDim(1)) : 0;
  const char* why = s.GetShapeSize() <= 0 || s.GetDimNum() != 3 ? "srcShape must be a non-empty [B, S, H]"
                    : typeSize != 2 && typeSize != 4              ? "typeSize must be 2 (half) or 4 (float)"
                    : h * typeSize % 32                           ? "the last axis H must be 32B aligned"
                    : h > 2040                                    ? "the last axis H can not be greater than 2040"
                    : basic && (h % 64 || bs % 8) ? "isBasicBlock needs H % 64 == 0 and B x S % 8 == 0"
                                                  : nullptr;
  if (why) std::fprintf(stderr, "[DeepNorm][%s] %s\n", fn, why);
  return why == nullptr;
}
}  // namespace deepnorm_detail

inline bool GetDeepNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                     const bool isBasicBlock, uint32_t& maxValue, uint32_t& minValue) {
  using namespace deepnorm_detail;
  if (!check("GetDeepNormMaxMinTmpSize", srcShape, typeSize, isBasicBlock)) return false;
  const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  const uint32_t times = isReuseSource && typeSize == 4 ? 2 : 3, mv = align32(b * s * 4);
  maxValue = times * align32(b * s * h * 4) + 2 * mv;
  minValue = times * align32(h * 4) + 2 * mv;
  return true;
}

inline bool GetDeepNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                  const uint32_t stackBufferSize, const uint32_t typeSize, const bool isReuseSource,
                                  const bool isBasicBlock, optiling::DeepNormTiling& tiling) {
  using namespace deepnorm_detail;
  uint32_t mx = 0, mn = 0;
  if (!GetDeepNormMaxMinTmpSize(srcShape, typeSize, isReuseSource, isBasicBlock, mx, mn) || stackBufferSize < mn)
    return false;
  const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  if (originSrcShape.GetDimNum() != 3) return false;
  const uint32_t oriH = uint32_t(originSrcShape.GetDim(2));
  if (uint32_t(originSrcShape.GetDim(0)) != b || uint32_t(originSrcShape.GetDim(1)) != s || oriH == 0 || oriH > h ||
      (isBasicBlock && oriH != h))
    return false;
  const uint32_t inputXSize = b * s * h, meanVarSize = b * s;
  const uint32_t nbuf = isReuseSource && typeSize == 4 ? 2 : 3;
  const uint32_t mvSize = (meanVarSize + 7) / 8 * 8;
  const uint32_t mvTotal = typeSize == 4 ? 0 : 2 * mvSize;
  const uint32_t tmpBufSize = stackBufferSize / 4;
  uint32_t one = (tmpBufSize - mvTotal) / nbuf / h * h;
  if (one > inputXSize) one = inputXSize;
  if (isBasicBlock && one / (8 * h) > 0) one = one / (8 * h) * (8 * h);  // whole blocks of 8 rows
  if (one == 0) return false;
  const uint32_t tail = inputXSize % one;
  tiling.set_bLength(b);
  tiling.set_sLength(s);
  tiling.set_hLength(h);
  tiling.set_originalHLength(oriH);
  tiling.set_inputXSize(inputXSize);
  tiling.set_meanVarSize(meanVarSize);
  tiling.set_numberOfTmpBuf(nbuf);
  tiling.set_meanTmpTensorPos(0);
  tiling.set_meanTmpTensorSize(mvSize);
  tiling.set_varianceTmpTensorPos(mvSize);
  tiling.set_varianceTmpTensorSize(mvSize);
  tiling.set_tmpBufSize(tmpBufSize);
  tiling.set_oneTmpSize(one);
  tiling.set_firstTmpStartPos(mvTotal);
  tiling.set_secondTmpStartPos(mvTotal + one);
  tiling.set_thirdTmpStartPos(mvTotal + 2 * one);
  tiling.set_loopRound(inputXSize / one);
  tiling.set_inputRoundSize(one);
  tiling.set_inputTailSize(tail);
  tiling.set_inputTailPos(inputXSize - tail);
  tiling.set_meanVarRoundSize(one / h);
  tiling.set_meanVarTailSize(tail / h);
  tiling.set_meanVarTailPos(meanVarSize - tail / h);
  tiling.set_bshCurLength(one);
  tiling.set_bsCurLength(one / h);
  tiling.set_lastDimValueBack(1.0f / static_cast<float>(oriH));
  return true;
}
// the overload filling the kernel-side struct (deepnorm_tiling_impl.cpp:273-283: saved even when refused)
inline bool GetDeepNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                  const uint32_t stackBufferSize, const uint32_t typeSize, const bool isReuseSource,
                                  const bool isBasicBlock, AscendC::tiling::DeepNormTiling& tiling) {
  optiling::DeepNormTiling t;
  const bool ok = GetDeepNormTilingInfo(srcShape, originSrcShape, stackBufferSize, typeSize, isReuseSource,
                                        isBasicBlock, t);
  t.SaveToBuffer(&tiling, sizeof(tiling));
  return ok;
}
}  // namespace AscendC
