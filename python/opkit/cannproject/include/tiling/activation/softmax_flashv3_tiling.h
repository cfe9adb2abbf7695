// Host side of CANN's SoftmaxFlashV3 (declared in asc-devkit 82b89a15 include/adv_api/activation/softmax_tiling.h:
// 60-90; A2 branch of impl/adv_api/tiling/activation/softmax_tiling.cpp:820-892, read, not copied). Only a half
// source (dataTypeSize1 2) with float mean / sum / max (dataTypeSize2 4). Per row the A2 code needs
// 5 blk + 2 srcK + 64 floats (blk = 32 / dataTypeSize2): the minimum is one row, the maximum srcM rows.
// SoftMaxFlashV3TilingFunc takes as many rows a pass as the buffer holds (whole 8-row tiles below srcM; no basic-
// block adjustment here, unlike SoftMax) and fills either tiling type.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"
#include "opkit/softmax_rows.h"

namespace AscendC {
namespace softmax_flashv3_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kUnit = 64, kTile = 8, kV3Buffers = 5, kBuffers = 2;
inline bool shape(const char* fn, const ge::Shape& s, uint32_t size1, uint32_t size2, uint32_t& m, uint32_t& k) {
  k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
  const int64_t n = s.GetShapeSize();
  if (n <= 0 || k == 0 || size1 != 2 || size2 != 4 || k * size1 % kBlk != 0) {
    std::fprintf(stderr,
                 "[SoftmaxFlashV3][%s] the shape must be non-empty with a 32-byte aligned last axis, dataTypeSize1 "
                 "sizeof(half) and dataTypeSize2 sizeof(float) (got %u, %u)\n",
                 fn, size1, size2);
    return false;
  }
  m = static_cast<uint32_t>(n / k);
  return true;
}
inline uint32_t row_floats(uint32_t k, uint32_t blk) { return blk * kV3Buffers + kBuffers * k + kUnit; }
}  // namespace softmax_flashv3_detail

inline void GetSoftMaxFlashV3MaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                           const uint32_t dataTypeSize2, uint32_t& maxValue, uint32_t& minValue,
                                           const bool isUpdate, const bool isBasicBlock = false) {
  using namespace softmax_flashv3_detail;
  (void)isUpdate;
  (void)isBasicBlock;
  uint32_t m = 0, k = 0;
  if (!shape("GetSoftMaxFlashV3MaxMinTmpSize", srcShape, dataTypeSize1, dataTypeSize2, m, k)) return;
  minValue = row_floats(k, kBlk / dataTypeSize2) * kFloat;
  maxValue = m * minValue;
}

template <class SoftMaxTilingT>
inline void SoftMaxFlashV3TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                     const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                     SoftMaxTilingT& t, const bool isUpdate, const bool isBasicBlock = false) {
  using namespace softmax_flashv3_detail;
  (void)isUpdate;
  (void)isBasicBlock;
  uint32_t m = 0, k = 0;
  if (!shape("SoftMaxFlashV3TilingFunc", srcShape, dataTypeSize1, dataTypeSize2, m, k)) return;
  const uint32_t blk = kBlk / dataTypeSize2;
  const uint32_t baseM = ::opkit::softmax_rows::whole_tiles(localWorkSpaceSize / kFloat / row_floats(k, blk), m);
  ::opkit::softmax_rows::fill(t, m, k, blk, baseM);
}
}  // namespace AscendC
