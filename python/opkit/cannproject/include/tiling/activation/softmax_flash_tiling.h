// Host side of CANN's SoftmaxFlash (v1) tiling (declared in asc-devkit 82b89a15 include/adv_api/activation/
// softmax_tiling.h:92-126): GetSoftMaxFlashMaxTmpSize, GetSoftMaxFlashMinTmpSize and SoftMaxFlashTilingFunc on a
// ge::Shape, the A2 branch of impl/adv_api/tiling/activation/softmax_tiling.cpp:222-370 (read, not copied).
// dataTypeSize is the sum / max type's; blk = 32 / dataTypeSize. Floats per row: without update blk + srcK + 64,
// with update 4 blk + 2 srcK; the maximum takes srcM rows, the minimum one. The tiling takes as many rows a round as
// the work buffer holds (whole 8-row tiles below srcM, basic blocks where the shape allows: AdjustToBasicBlockBaseM).
// Refused as CANN's checks do (a message, 0 / the tiling untouched): an empty shape, a type size other than 2 / 4,
// the last axis not 32-byte aligned. The kernel runs SoftmaxFlash on the emulator (lib/activation/softmaxflash.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"
#include "opkit/softmax_rows.h"

namespace AscendC {
namespace softmax_flash_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kUnit = 64;
inline bool shape(const char* fn, const ge::Shape& s, uint32_t size, uint32_t& m, uint32_t& k) {
  k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
  const int64_t n = s.GetShapeSize();
  const char* why = n <= 0 || k == 0                ? "the shape must be non-empty"
                    : size != 2 && size != 4        ? "dataTypeSize must be 2 (half) or 4 (float)"
                    : k * size % kBlk != 0          ? "the last axis must be 32-byte aligned"
                                                    : nullptr;
  if (why) {
    std::fprintf(stderr, "[SoftmaxFlash][%s] %s\n", fn, why);
    return false;
  }
  m = static_cast<uint32_t>(n / k);
  return true;
}
inline uint32_t row(uint32_t k, uint32_t blk, bool update) { return update ? blk * 4 + k * 2 : blk + k + kUnit; }
}  // namespace softmax_flash_detail

inline uint32_t GetSoftMaxFlashMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isUpdate,
                                          const bool isReuseSource) {
  using namespace softmax_flash_detail;
  (void)isReuseSource;
  uint32_t m = 0, k = 0;
  if (!shape("GetSoftMaxFlashMaxTmpSize", srcShape, dataTypeSize, m, k)) return 0;
  return m * row(k, kBlk / dataTypeSize, isUpdate) * kFloat;
}

inline uint32_t GetSoftMaxFlashMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isUpdate,
                                          const bool isReuseSource) {
  using namespace softmax_flash_detail;
  (void)isReuseSource;
  uint32_t m = 0, k = 0;
  if (!shape("GetSoftMaxFlashMinTmpSize", srcShape, dataTypeSize, m, k)) return 0;
  return row(k, kBlk / dataTypeSize, isUpdate) * kFloat;
}

// optiling::SoftMaxTiling or the kernel-side AscendC::tiling::SoftMaxTiling (CANN's two overloads, :307-370)
template <class SoftMaxTilingT>
inline void SoftMaxFlashTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                   const uint32_t localWorkSpaceSize, SoftMaxTilingT& softmaxFlashTiling,
                                   const bool isUpdate = false) {
  using namespace softmax_flash_detail;
  uint32_t m = 0, k = 0;
  if (!shape("SoftMaxFlashTilingFunc", srcShape, dataTypeSize, m, k)) return;
  if (localWorkSpaceSize == 0) {
    std::fprintf(stderr, "[SoftmaxFlash][SoftMaxFlashTilingFunc] localWorkSpaceSize must be greater than 0\n");
    return;
  }
  const uint32_t blk = kBlk / dataTypeSize;
  const uint32_t fit = localWorkSpaceSize / kFloat / row(k, blk, isUpdate);
  const uint32_t baseM = ::opkit::softmax_rows::rows_per_pass(fit, m, k);
  ::opkit::softmax_rows::fill(softmaxFlashTiling, m, k, blk, baseM);
}
}  // namespace AscendC
