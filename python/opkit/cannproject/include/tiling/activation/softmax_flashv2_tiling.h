// Host side of CANN's SoftmaxFlashV2 work-buffer sizes (declared in asc-devkit 82b89a15 include/adv_api/activation/
// softmax_tiling.h): GetSoftMaxFlashV2MaxTmpSize and GetSoftMaxFlashV2MinTmpSize on a ge::Shape, the A2 branch of
// impl/adv_api/tiling/activation/softmax_tiling.cpp (read, not copied). blk = 32 / dataTypeSize2 (the sum / max
// type), floats per row: half source 2 blk + k + 64, float source blk + 64; with isBasicBlock (k % 64 == 0 and, for
// Max, m % 8 == 0) a basic tile of 8 rows with 64 -> 128 at k = 1024; isFlashOutputBrc multiplies the minimum by
// min(32 / dataTypeSize1, m) rows. The kernel runs SoftmaxFlashV2 on the emulator (lib/activation/softmaxflashv2.h),
// which checks the minimum. SoftMaxFlashV2TilingFunc fills an optiling::SoftMaxTiling (rows per round; the emulator's
// result does not depend on them). Not here: its overload for the kernel-side AscendC::tiling::SoftMaxTiling.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"
#include "opkit/softmax_rows.h"

namespace AscendC {
namespace softmax_flashv2_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kUnit = 64, kTile = 8, kBasicMin = 256, kSpecialK = 1024;
inline bool shape(const char* fn, const ge::Shape& s, uint32_t size1, uint32_t size2, uint32_t& m, uint32_t& k) {
  k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
  const int64_t n = s.GetShapeSize();
  if (n <= 0 || k == 0 || (size1 != 2 && size1 != 4) || (size2 != 2 && size2 != 4)) {
    std::fprintf(stderr, "[SoftmaxFlashV2][%s] the shape must be non-empty and the type sizes 2 or 4\n", fn);
    return false;
  }
  m = static_cast<uint32_t>(n / k);
  return true;
}
inline uint32_t row(uint32_t k, uint32_t size1, uint32_t blk) { return size1 == 2 ? blk * 2 + k + kUnit : blk + kUnit; }
inline uint32_t basic_row(uint32_t k, uint32_t size1, uint32_t blk) {
  const uint32_t unit = k == kSpecialK ? kUnit * 2 : kUnit;
  return size1 == 2 ? blk + k + unit : blk + unit;
}
}  // namespace softmax_flashv2_detail

inline uint32_t GetSoftMaxFlashV2MaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate, const bool isBasicBlock,
                                            const bool isFlashOutputBrc = false) {
  using namespace softmax_flashv2_detail;
  (void)isUpdate;
  (void)isFlashOutputBrc;
  uint32_t m = 0, k = 0;
  if (!shape("GetSoftMaxFlashV2MaxTmpSize", srcShape, dataTypeSize1, dataTypeSize2, m, k)) return 0;
  const uint32_t blk = kBlk / dataTypeSize2;
  if (isBasicBlock && k % kUnit == 0 && m % kTile == 0) {
    while (m * k >= kUnit * kBasicMin) m /= 2;  // at most 255 repeats
    return m * basic_row(k, dataTypeSize1, blk) * kFloat;
  }
  return m * row(k, dataTypeSize1, blk) * kFloat;
}

inline uint32_t GetSoftMaxFlashV2MinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate, const bool isBasicBlock,
                                            const bool isFlashOutputBrc = false) {
  using namespace softmax_flashv2_detail;
  (void)isUpdate;
  uint32_t m = 0, k = 0;
  if (!shape("GetSoftMaxFlashV2MinTmpSize", srcShape, dataTypeSize1, dataTypeSize2, m, k)) return 0;
  const uint32_t blk = kBlk / dataTypeSize2;
  const bool basic = isBasicBlock && k % kUnit == 0;
  uint32_t need = basic ? kTile * basic_row(k, dataTypeSize1, blk) : row(k, dataTypeSize1, blk);
  if (isFlashOutputBrc) need = (basic ? need / kTile : need) * std::min(kBlk / dataTypeSize1, m);
  return need * kFloat;
}

// rows per round as the work buffer holds (softmax_tiling.cpp SoftMaxFlashV2TilingFunc, A2 branch)
template <class SoftMaxTilingT>
inline void SoftMaxFlashV2TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                     const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                     SoftMaxTilingT& t, const bool isUpdate, const bool isBasicBlock = false,
                                     const bool isFlashOutputBrc = false) {
  using namespace softmax_flashv2_detail;
  (void)isUpdate;
  uint32_t m = 0, k = 0;
  if (!shape("SoftMaxFlashV2TilingFunc", srcShape, dataTypeSize1, dataTypeSize2, m, k)) return;
  const uint32_t blk = kBlk / dataTypeSize2, work = localWorkSpaceSize / kFloat;
  uint32_t baseM = 0;
  if (isBasicBlock && k % kUnit == 0 && m % kTile == 0) {
    baseM = ::opkit::softmax_rows::basic_block_rows(std::min(work / basic_row(k, dataTypeSize1, blk), m), m, k);
  } else {
    baseM = work / row(k, dataTypeSize1, blk);
  }
  baseM = ::opkit::softmax_rows::whole_tiles(baseM, m, isFlashOutputBrc && dataTypeSize1 == 2 ? kBlk / 2 : kTile);
  ::opkit::softmax_rows::fill(t, m, k, blk, baseM);
}
}  // namespace AscendC
