// Host side of CANN's GroupNorm tiling (asc-devkit 82b89a15 include/adv_api/normalization/groupnorm_tiling.h, the
// struct groupnorm_tilingdata.h:21-52), reached through tiling/tiling_api.h: GetGroupNormMaxMinTmpSize and
// GetGroupNormNDTilingInfo (both void, as CANN's), written after
// impl/adv_api/tiling/normalization/groupnorm_tiling_impl.cpp:42-241 (read, not copied). Where CANN's host asserts
// (ASCENDC_HOST_ASSERT: a shape not [N, C, H, W], typeSize not 2 / 4, groupNum or C of 0, :46-92, :109-119) it logs
// and returns, leaving the outputs untouched; so does the tiling for half when one round cannot hold C channels
// (:179-181) -- the kernel then refuses the unfilled tiling. The kernel runs GroupNorm on the emulator
// (lib/normalization/groupnorm.h).
#pragma once
#include <cstdint>
#include <cstdio>

#include "layernorm_tiling.h"  // AscendC::TensorShape
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(GroupNormTiling)
TILING_DATA_FIELD_DEF(uint32_t, n);
TILING_DATA_FIELD_DEF(uint32_t, c);
TILING_DATA_FIELD_DEF(uint32_t, hw);
TILING_DATA_FIELD_DEF(uint32_t, g);
TILING_DATA_FIELD_DEF(uint32_t, d);
TILING_DATA_FIELD_DEF(uint32_t, hwAlignSize);
TILING_DATA_FIELD_DEF(uint32_t, dhwAlignSize);
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
TILING_DATA_FIELD_DEF(float, factor);
TILING_DATA_FIELD_DEF(bool, smallShape);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace groupnorm_detail {
inline bool check(const char* fn, const ge::Shape& s, uint32_t typeSize, uint32_t groupNum) {
  const char* why = s.GetShapeSize() <= 0         ? "Input Shape size must be greater than 0"
                    : s.GetDimNum() != 4          ? "the dims of srcShape should be 4 (e.g. [N, C, H, W])"
                    : typeSize != 2 && typeSize != 4 ? "typeSize must be 2 (half) or 4 (float)"
                    : groupNum == 0               ? "groupNum must be greater than 0"
                                                  : nullptr;
  if (why) std::fprintf(stderr, "[GroupNorm][%s] %s\n", fn, why);
  return why == nullptr;
}
// GetGroupNormTmpSize (:42-76): C / groupNum channels of HW (32-byte aligned, counted as floats) for the minimum,
// N x C for the maximum; two buffers instead of three with isReuseSource for float
inline uint32_t tmp_size(const ge::Shape& s, uint32_t typeSize, bool reuse, uint32_t groupNum, bool isMax) {
  const uint32_t n = uint32_t(s.GetDim(0)), c = uint32_t(s.GetDim(1)), hw = uint32_t(s.GetDim(2) * s.GetDim(3));
  const uint32_t mv = (n * groupNum * 4 + 31) / 32 * 32;
  const uint32_t ch = (hw * typeSize + 31) / 32 * 32 / typeSize * 4;
  const uint32_t dhw = (isMax ? n * c : c / groupNum) * ch;
  return (reuse && typeSize == 4 ? 2 : 3) * dhw + 2 * mv;
}
}  // namespace groupnorm_detail

inline void GetGroupNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const uint32_t groupNum, uint32_t& maxValue, uint32_t& minValue) {
  using namespace groupnorm_detail;
  if (!check("GetGroupNormMaxMinTmpSize", srcShape, typeSize, groupNum) || srcShape.GetDim(1) == 0) return;
  maxValue = tmp_size(srcShape, typeSize, isReuseSource, groupNum, true);
  minValue = tmp_size(srcShape, typeSize, isReuseSource, groupNum, false);
}

inline void GetGroupNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, const uint32_t groupNum,
                                     optiling::GroupNormTiling& tiling) {
  using namespace groupnorm_detail;
  if (!check("GetGroupNormNDTilingInfo", srcShape, typeSize, groupNum) || srcShape.GetDim(1) == 0) return;
  const uint32_t n = uint32_t(srcShape.GetDim(0)), c = uint32_t(srcShape.GetDim(1));
  const uint32_t hw = uint32_t(srcShape.GetDim(2) * srcShape.GetDim(3)), g = groupNum, d = c / groupNum;
  const uint32_t hwAlign = (typeSize * hw + 31) / 32 * 32 / typeSize;
  const uint32_t dhwAlign = d * hwAlign;
  if (dhwAlign == 0) {  // (:147)
    std::fprintf(stderr, "[GroupNorm][GetGroupNormNDTilingInfo] the value of dhwAlignSize should not be zero\n");
    return;
  }
  const uint32_t inputXSize = n * c * hwAlign, meanVarSize = n * g;
  const uint32_t mvSize = (meanVarSize + 7) / 8 * 8;
  const uint32_t mvTotal = typeSize == 4 ? 0 : 2 * mvSize;
  const uint32_t nbuf = isReuseSource && typeSize == 4 ? 2 : 3;
  const uint32_t tmpBufSize = stackBufferSize / 32 * 32 / 4;
  uint32_t one = (tmpBufSize - mvTotal) / nbuf;
  uint32_t bsCur = one / dhwAlign;
  uint32_t k = 8;  // the smallShape test (:151-156)
  while ((dhwAlign / 8) % k != 0) k--;
  const bool smallShape = hwAlign <= 64 && hwAlign * d <= 64 * k;
  if (smallShape) {  // ReduceSum's mask / repeat limits bound the groups of one round (:161-177)
    uint32_t mask1 = 64;
    if (dhwAlign > 64) {
      while (mask1 != 0 && dhwAlign % mask1 != 0) mask1 -= 8;
    } else {
      mask1 = dhwAlign;
    }
    if (mask1 == 0) return;
    const uint32_t maxBs = 255 / (dhwAlign / mask1) / 8 * 8;
    if (maxBs < bsCur) bsCur = maxBs;
  }
  if (typeSize == 2 && bsCur * dhwAlign < c) return;  // (:179-181)
  one = bsCur * d * hwAlign;
  if (one > inputXSize) {
    bsCur = meanVarSize;
    one = inputXSize;
  }
  if (one == 0) {
    std::fprintf(stderr, "[GroupNorm][GetGroupNormNDTilingInfo] the oneTmpSize should not be zero\n");
    return;
  }
  const uint32_t tail = inputXSize % one;
  tiling.set_n(n);
  tiling.set_c(c);
  tiling.set_hw(hw);
  tiling.set_g(g);
  tiling.set_d(d);
  tiling.set_hwAlignSize(hwAlign);
  tiling.set_dhwAlignSize(dhwAlign);
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
  tiling.set_meanVarRoundSize(one / dhwAlign);
  tiling.set_meanVarTailSize(tail / dhwAlign);
  tiling.set_meanVarTailPos(meanVarSize - tail / dhwAlign);
  tiling.set_bshCurLength(one);
  tiling.set_bsCurLength(bsCur);
  tiling.set_factor(1.0f / static_cast<float>(d * hw));
  tiling.set_smallShape(smallShape);
}
// the overload filling the kernel-side struct (:233-240)
inline void GetGroupNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, const uint32_t groupNum,
                                     AscendC::tiling::GroupNormTiling& tiling) {
  optiling::GroupNormTiling t;
  GetGroupNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, groupNum, t);
  t.SaveToBuffer(&tiling, sizeof(tiling));
}
}  // namespace AscendC
