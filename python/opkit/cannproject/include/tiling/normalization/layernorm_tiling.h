// Host side of CANN's LayerNorm tiling (asc-devkit 82b89a15 include/adv_api/normalization/layernorm_tiling.h, the
// struct layernorm_tilingdata.h:21-48), reached through tiling/tiling_api.h as CANN's is: GetLayerNormMaxMinTmpSize
// and GetLayerNormNDTilingInfo of the [B, S, H, originalH] form, written after
// impl/adv_api/tiling/normalization/layernorm_tiling_impl.cpp:39-231 (read, not copied; the A2 branch). The kernel
// gets the same layout from the emulator (opkit_emu/adv_tiling_vector.h) and runs LayerNorm there
// (lib/normalization/layernorm.h). A shape that is not 4-D, empty, or a type size other than 2 / 4 leaves the outputs
// untouched with a message on stderr. (CANN's ASCENDC_HOST_ASSERT in CheckLayerNormHostCommon returns from the check
// alone and the computation goes on with the bad shape: stopping here is stricter.) GetWelfordUpdateMaxMinTmpSize and the
// rstd form's LayerNormSeparateTiling overloads (isComputeRstd) too.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "opkit/adv_tiling_structs.h"  // AscendC::tiling::*, the kernel-side layout CANN's overloads fill
// CANN's layernorm_tiling.h includes the generated kernel_tiling.h, so a program compiled as one translation unit with
// the kernel headers (a `.asc` file: opkit run-asc) sees the kernel-side structs by their global names too; a pure
// host build (no emulator include path) has only AscendC::tiling::*
#if __has_include("kernel_tiling/kernel_tiling.h")
#include "kernel_tiling/kernel_tiling.h"
#endif
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LayerNormTiling)
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
// include/adv_api/normalization/layernorm_tilingdata.h:50-77 (the rstd form's)
BEGIN_TILING_DATA_DEF(LayerNormSeparateTiling)
TILING_DATA_FIELD_DEF(uint32_t, aLength);
TILING_DATA_FIELD_DEF(uint32_t, rLength);
TILING_DATA_FIELD_DEF(uint32_t, halfAddRepeatTimes);
TILING_DATA_FIELD_DEF(uint32_t, rHeadLength);
TILING_DATA_FIELD_DEF(float, k2Rec);
TILING_DATA_FIELD_DEF(float, k2RRec);
TILING_DATA_FIELD_DEF(uint32_t, inputXSize);
TILING_DATA_FIELD_DEF(uint32_t, meanVarSize);
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf);
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
TILING_DATA_FIELD_DEF(uint32_t, arCurLength);
TILING_DATA_FIELD_DEF(uint32_t, aCurLength);
TILING_DATA_FIELD_DEF(float, rValueBack);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
using TensorShape = ge::Shape;  // the host's shape type in CANN's newer tiling headers (utils/types.h)

namespace layernorm_detail {
constexpr uint32_t kBlk = 32;
inline uint32_t align32(uint32_t n) { return (n + kBlk - 1) / kBlk * kBlk; }
// CheckLayerNormHostCommon (layernorm_tiling_impl.cpp:39-53)
inline bool check(const char* fn, const ge::Shape& s, uint32_t typeSize) {
  const char* why = s.GetShapeSize() <= 0                  ? "the shape size must be greater than 0"
                    : s.GetDimNum() != 4                   ? "srcShape must be 4-D [B, S, storageHLength, originHLength]"
                    : typeSize != 2 && typeSize != 4 ? "typeSize must be 2 (half) or 4 (float)"
                                                           : nullptr;
  if (why) std::fprintf(stderr, "[LayerNorm][%s] %s\n", fn, why);
  return why == nullptr;
}
}  // namespace layernorm_detail

// Bytes of work buffer: Max for all B x S rows at once, Min for one row (three float rows, two with
// isReuseSource for float, plus the float mean and variance of B x S rows).
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue) {
  using namespace layernorm_detail;
  if (!check("GetLayerNormMaxMinTmpSize", srcShape, typeSize)) return;
  const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  const uint32_t mv = align32(b * s * 4), times = isReuseSource && typeSize == 4 ? 2 : 3;
  maxValue = times * align32(b * s * h * 4) + 2 * mv;
  minValue = times * align32(h * 4) + 2 * mv;
}

inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, optiling::LayerNormTiling& tiling) {
  using namespace layernorm_detail;
  if (!check("GetLayerNormNDTilingInfo", srcShape, typeSize)) return;
  const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  const uint32_t oriH = uint32_t(srcShape.GetDim(3));
  const uint32_t inputXSize = b * s * h, meanVarSize = b * s;
  const uint32_t nbuf = isReuseSource && typeSize == 4 ? 2 : 3;
  const uint32_t mvSize = (meanVarSize + 7) / 8 * 8;  // floats, one 32-byte block rounded
  const uint32_t mvTotal = typeSize == 4 ? 0 : 2 * mvSize;  // float writes mean / variance straight to the outputs
  const uint32_t tmpBufSize = stackBufferSize / 4;
  if (h == 0 || tmpBufSize < mvTotal) return;
  uint32_t one = (tmpBufSize - mvTotal) / nbuf / h * h;
  if (one > inputXSize) one = inputXSize;
  if (one == 0) return;
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
}
// The rstd form's sizes on [A, R] (layernorm_tiling_impl.cpp:266-322, the A2 branch; Normalize's minimum from
// normalize_tiling_impl.cpp with typeSizeU = typeSize, as CANN passes it): isComputeRstd / isOnlyOutput as CANN
// (only true / false supported)
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const bool isComputeRstd, const bool isOnlyOutput, uint32_t& maxValue,
                                      uint32_t& minValue) {
  using namespace layernorm_detail;
  (void)isReuseSource;
  (void)isComputeRstd;
  if (isOnlyOutput || srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) {
    std::fprintf(stderr, "[LayerNorm][GetLayerNormMaxMinTmpSize] the rstd form takes [A, R], typeSize 2 or 4, "
                         "isOnlyOutput false\n");
    return;
  }
  const uint32_t a = uint32_t(srcShape.GetDim(0)), r = uint32_t(srcShape.GetDim(1)), per = 32 / typeSize;
  const uint32_t rwp = (r + per - 1) / per * per, mv = align32(a * 4), rb = align32(rwp * 4);
  const uint32_t ap8 = (a + 7) / 8 * 8;
  const uint32_t normMax = 2 * rb + 2 * align32(ap8 * rwp * 4);
  const uint32_t normMin = std::max(mv, (typeSize == 4 ? 2 : 4) * rb);
  maxValue = std::max(2 * align32(a * rwp * 4), normMax) + mv;
  minValue = std::max(2 * rb, normMin) + mv;
}

inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, const bool isComputeRstd,
                                     optiling::LayerNormSeparateTiling& tiling) {
  (void)isReuseSource;
  (void)isComputeRstd;
  if (srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4)) {
    std::fprintf(stderr, "[LayerNorm][GetLayerNormNDTilingInfo] the rstd form takes [A, R] and typeSize 2 or 4\n");
    return;
  }
  const uint32_t a = uint32_t(srcShape.GetDim(0)), r = uint32_t(srcShape.GetDim(1)), per = 32 / typeSize;
  const uint32_t rwp = (r + per - 1) / per * per, inputXSize = a * rwp;
  const uint32_t varSize = (a + 7) / 8 * 8, tmpBufSize = stackBufferSize / 4;
  if (rwp == 0 || tmpBufSize < varSize) return;
  uint32_t one = (tmpBufSize - varSize) / 2 / rwp * rwp;
  if (one > inputXSize) one = inputXSize;
  if (one == 0) return;
  const uint32_t tail = inputXSize % one;
  tiling.set_aLength(a);
  tiling.set_rLength(r);
  tiling.set_inputXSize(inputXSize);
  tiling.set_meanVarSize(a);
  tiling.set_numberOfTmpBuf(2);
  tiling.set_varianceTmpTensorPos(0);
  tiling.set_varianceTmpTensorSize(varSize);
  tiling.set_tmpBufSize(tmpBufSize);
  tiling.set_oneTmpSize(one);
  tiling.set_firstTmpStartPos(varSize);
  tiling.set_secondTmpStartPos(varSize + one);
  tiling.set_loopRound(inputXSize / one);
  tiling.set_inputRoundSize(one);
  tiling.set_inputTailSize(tail);
  tiling.set_inputTailPos(inputXSize - tail);
  tiling.set_meanVarRoundSize(one / rwp);
  tiling.set_meanVarTailSize(tail / rwp);
  tiling.set_meanVarTailPos(a - tail / rwp);
  tiling.set_arCurLength(one);
  tiling.set_aCurLength(one / rwp);
  tiling.set_rValueBack(1.0f / static_cast<float>(r));
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, const bool isComputeRstd,
                                     AscendC::tiling::LayerNormSeparateTiling& tiling) {
  optiling::LayerNormSeparateTiling t;
  GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, isComputeRstd, t);
  t.SaveToBuffer(&tiling, sizeof(tiling));
}
// WelfordUpdate's work buffer (layernorm_tiling_impl.cpp:233-264, the A2 branch): [rnLength, abLength]; the minimum
// is float repeats of 256 bytes, 3 for a half inputX, 1 with isReuseSource, 2 otherwise; the maximum that many per
// 64 elements of the whole shape
inline void GetWelfordUpdateMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSizeT, const uint32_t typeSizeU,
                                          const bool isReuseSource, const bool isInplace, uint32_t& maxValue,
                                          uint32_t& minValue) {
  (void)typeSizeU;
  (void)isInplace;
  if (srcShape.GetDimNum() != 2) {
    std::fprintf(stderr, "[WelfordUpdate][GetWelfordUpdateMaxMinTmpSize] srcShape dims must be 2.\n");
    return;
  }
  const uint32_t n = uint32_t(srcShape.GetDim(0) * srcShape.GetDim(1));
  minValue = 256 * (typeSizeT == 2 ? 3 : isReuseSource ? 1 : 2);
  maxValue = (n + 63) / 64 * minValue;
}
// CANN's deprecated spelling (layernorm_tiling.h)
[[deprecated("GetLayerNormNDTillingInfo is deprecated, please use GetLayerNormNDTilingInfo instead!")]]
inline void GetLayerNormNDTillingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                      const uint32_t typeSize, const bool isReuseSource,
                                      optiling::LayerNormTiling& tilling) {
  GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, tilling);
}
// the overload filling the kernel-side struct (layernorm_tiling_impl.cpp:190-197, 225-231)
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, AscendC::tiling::LayerNormTiling& tiling) {
  optiling::LayerNormTiling t;
  GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, t);
  t.SaveToBuffer(&tiling, sizeof(tiling));
}
}  // namespace AscendC
