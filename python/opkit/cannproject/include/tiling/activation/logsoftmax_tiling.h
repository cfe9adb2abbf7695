// Host side of CANN's LogSoftMax tiling (asc-devkit 82b89a15 include/adv_api/activation/logsoftmax_tiling.h; the
// struct optiling::LogSoftMaxTiling is tiling/tiling_api.h's): GetLogSoftMaxMaxTmpSize, GetLogSoftMaxMinTmpSize and
// LogSoftMaxTilingFunc on a ge::Shape, written after impl/adv_api/tiling/activation/logsoftmax_tiling.cpp:37-172
// (read, not copied; the A2 branch). The A2 kernel recomputes its tiling from the buffer it is given, so these
// matter for the buffer size (lib/activation/logsoftmax.h checks the minimum). An empty shape or a type size other
// than 2 / 4 gives 0 / leaves the tiling untouched with a message on stderr.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"

namespace AscendC {
namespace logsoftmax_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kUnit = 64, kTile = 8, kBasicMin = 256;
inline bool shape(const char* fn, const ge::Shape& s, uint32_t size, uint32_t& m, uint32_t& k) {
  k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
  const int64_t n = s.GetShapeSize();
  if (n <= 0 || k == 0 || (size != 2 && size != 4)) {
    std::fprintf(stderr, "[LogSoftMax][%s] the shape must be non-empty and dataTypeSize 2 (half) or 4 (float)\n", fn);
    return false;
  }
  m = static_cast<uint32_t>(n / k);
  return true;
}
}  // namespace logsoftmax_detail

// float work per row: one block of sum / max, the row, and a repeat for the reduction
inline uint32_t GetLogSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
  using namespace logsoftmax_detail;
  (void)isReuseSource;
  uint32_t m = 0, k = 0;
  if (!shape("GetLogSoftMaxMaxTmpSize", srcShape, dataTypeSize, m, k)) return 0;
  return m * (kBlk / dataTypeSize + k + kUnit) * kFloat;
}
inline uint32_t GetLogSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
  using namespace logsoftmax_detail;
  (void)isReuseSource;
  uint32_t m = 0, k = 0;
  if (!shape("GetLogSoftMaxMinTmpSize", srcShape, dataTypeSize, m, k)) return 0;
  return (kBlk / dataTypeSize + k + kUnit) * kFloat;
}

template <class LogSoftMaxTilingT>
inline void LogSoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                 const uint32_t localWorkSpaceSize, LogSoftMaxTilingT& t) {
  using namespace logsoftmax_detail;
  uint32_t m = 0, k = 0;
  if (!shape("LogSoftMaxTilingFunc", srcShape, dataTypeSize, m, k)) return;
  const uint32_t blk = kBlk / dataTypeSize;
  uint32_t baseM = std::min(localWorkSpaceSize / kFloat / (blk + k + kUnit), m);
  if (baseM < m && baseM > kTile) baseM = baseM / kTile * kTile;
  if (baseM > kTile && m % kTile == 0 && k % kUnit == 0) {  // basic blocks (AdjustToBasicBlockBaseM)
    baseM = baseM / kTile * kTile;
    while (m % baseM != 0) baseM -= kTile;
    while (baseM * k >= kUnit * kBasicMin) baseM /= 2;  // at most 255 repeats
  }
  if (baseM == 0) {
    std::fprintf(stderr, "[LogSoftMax][LogSoftMaxTilingFunc] localWorkSpaceSize holds no row\n");
    return;
  }
  t.set_srcM(m);
  t.set_srcK(k);
  t.set_srcSize(m * k);
  t.set_outMaxM(m);
  t.set_outMaxK(blk);
  t.set_outMaxSize(m * blk);
  t.set_splitM(baseM);
  t.set_splitK(k);
  t.set_splitSize(baseM * k);
  t.set_reduceM(baseM);
  t.set_reduceK(blk);
  t.set_reduceSize(baseM * blk);
  t.set_rangeM(m / baseM);
  t.set_tailM(m % baseM);
  t.set_tailSplitSize(m % baseM * k);
  t.set_tailReduceSize(m % baseM * blk);
}
}  // namespace AscendC
