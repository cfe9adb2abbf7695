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
#include "opkit/softmax_rows.h"

namespace AscendC {
namespace logsoftmax_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kUnit = 64;
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
  const uint32_t baseM = ::opkit::softmax_rows::rows_per_pass(localWorkSpaceSize / kFloat / (blk + k + kUnit), m, k);
  if (baseM == 0) {
    std::fprintf(stderr, "[LogSoftMax][LogSoftMaxTilingFunc] localWorkSpaceSize holds no row\n");
    return;
  }
  ::opkit::softmax_rows::fill(t, m, k, blk, baseM);
}
}  // namespace AscendC
