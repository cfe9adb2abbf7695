// Host side of CANN's pattern reductions ReduceMax / ReduceMin / ReduceSum / ReduceMean / ReduceProd / ReduceAny /
// ReduceAll (declared in asc-devkit 82b89a15 include/adv_api/
// reduce/reduce_tiling.h:114-132; impl/adv_api/tiling/reduce/reduce_tiling.cpp:50-110 and 214-264, the A2 branch,
// read, not copied): srcShape [first, last], float or half, pattern AR or RA, isSrcInnerPad true (A2). Bytes: AR 0
// for last <= 32 / size, first x 32 below one 256-byte repeat, first x 256 from one repeat; RA k x align32(last x
// size), k the largest power of two below first (first itself when first is 1); 0 with isReuseSource. The kernel
// (lib/reduce/reduce.h) checks them. ReducePattern is declared as CANN's normalize_utils.h does (shared guard).
#pragma once
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"

namespace AscendC {
#ifndef ASCC_ENUM_REDUCEPATTERN
#define ASCC_ENUM_REDUCEPATTERN
enum class ReducePattern : uint32_t {
  AR = 0, RA = 1, R, ARA, ARAR, ARARA, ARARAR, ARARARA, ARARARAR, ARARARARA, RAR, RARA, RARAR, RARARA, RARARAR,
  RARARARA,
};
#endif
namespace reduce_pattern_detail {
inline void sizes(const char* api, const ge::Shape& shape, ge::DataType type, ReducePattern pattern, bool innerPad,
                  bool reuse, uint32_t& maxValue, uint32_t& minValue) {
  const uint32_t size = type == ge::DT_FLOAT ? 4 : type == ge::DT_FLOAT16 ? 2 : 0;
  const bool ok = shape.GetDimNum() == 2 && shape.GetDim(0) > 0 && shape.GetDim(1) > 0 && size != 0 && innerPad &&
                  (pattern == ReducePattern::AR || pattern == ReducePattern::RA);
  if (!ok) {
    std::fprintf(stderr,
                 "[%s][Get%sMaxMinTmpSize] srcShape must be [first, last] with both > 0, the type float or half, "
                 "isSrcInnerPad true (A2) and the pattern AR or RA\n", api, api);
    return;
  }
  if (reuse) {
    maxValue = minValue = 0;
    return;
  }
  const uint32_t first = static_cast<uint32_t>(shape.GetDim(0)), last = static_cast<uint32_t>(shape.GetDim(1));
  if (pattern == ReducePattern::AR) {
    const uint32_t blk = 32 / size, rep = 256 / size;
    maxValue = minValue = last <= blk ? 0 : last < rep ? first * blk * size : first * rep * size;
    return;
  }
  uint32_t k = 1;
  for (uint32_t n = first; n > 1; n >>= 1) k <<= 1;
  if (k == first && first > 1) k >>= 1;
  maxValue = minValue = k * ((last * size + 31) / 32 * 32);
}
// ReduceSum (reduce_tiling.cpp:121-150, 302-320; float only on A2): AR 0 for last <= 64, else first x k x 4 (k the
// power of two <= last, halved when equal and first > 1); RA k x padLast x 4 (k for first likewise)
inline void sum_sizes(const ge::Shape& shape, ge::DataType type, ReducePattern pattern, bool innerPad, bool reuse,
                      uint32_t& maxValue, uint32_t& minValue, const char* api = "ReduceSum") {
  const bool ok = shape.GetDimNum() == 2 && shape.GetDim(0) > 0 && shape.GetDim(1) > 0 && type == ge::DT_FLOAT &&
                  innerPad && (pattern == ReducePattern::AR || pattern == ReducePattern::RA);
  if (!ok) {
    std::fprintf(stderr, "[%s][Get%sMaxMinTmpSize] srcShape must be [first, last] with both > 0, the type float (A2), "
                         "isSrcInnerPad true and the pattern AR or RA\n", api, api);
    return;
  }
  if (reuse) {
    maxValue = minValue = 0;
    return;
  }
  auto findk = [](uint32_t n) { uint32_t k = 1; for (; n > 1; n >>= 1) k <<= 1; return k; };
  const uint32_t first = static_cast<uint32_t>(shape.GetDim(0)), last = static_cast<uint32_t>(shape.GetDim(1));
  if (pattern == ReducePattern::AR) {
    uint32_t k = findk(last);
    if (k == last && first > 1) k >>= 1;
    maxValue = minValue = last <= 64 ? 0 : first * k * 4;
    return;
  }
  uint32_t k = findk(first);
  if (k == first && first > 1) k >>= 1;
  maxValue = minValue = k * ((last + 7) / 8 * 8) * 4;
}
inline bool shape_ok(const char* api, const ge::Shape& shape, bool typeOk, const char* types, ReducePattern pattern,
                     bool innerPad) {
  const bool ok = shape.GetDimNum() == 2 && shape.GetDim(0) > 0 && shape.GetDim(1) > 0 && typeOk && innerPad &&
                  (pattern == ReducePattern::AR || pattern == ReducePattern::RA);
  if (!ok)
    std::fprintf(stderr, "[%s][Get%sMaxMinTmpSize] srcShape must be [first, last] with both > 0, the type %s (A2), "
                         "isSrcInnerPad true and the pattern AR or RA\n", api, api, types);
  return ok;
}
inline uint32_t findk_halved(uint32_t n, bool halve) {
  uint32_t k = 1;
  for (uint32_t m = n; m > 1; m >>= 1) k <<= 1;
  return k == n && halve ? k >> 1 : k;
}
}  // namespace reduce_pattern_detail

// ReduceMean (reduce_tiling.cpp:325-335): float only on A2, ReduceSum's sizes
inline void GetReduceMeanMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                       bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue,
                                       uint32_t& minValue) {
  reduce_pattern_detail::sum_sizes(srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue, minValue,
                                   "ReduceMean");
}
// ReduceProd (reduce_tiling.cpp:181-212): float only; AR (max(8, k) + first x 8) x 4 + 256 (k the power of two <=
// last, halved when equal and first > 1), 256 with isReuseSource; RA k x align32(last x 4), 0 with isReuseSource
inline void GetReduceProdMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                       bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue,
                                       uint32_t& minValue) {
  using namespace reduce_pattern_detail;
  if (!shape_ok("ReduceProd", srcShape, dataType == ge::DT_FLOAT, "float", pattern, isSrcInnerPad)) return;
  const uint32_t first = uint32_t(srcShape.GetDim(0)), last = uint32_t(srcShape.GetDim(1));
  const bool ar = pattern == ReducePattern::AR;
  if (isReuseSource) {
    maxValue = minValue = ar ? 256 : 0;
    return;
  }
  if (ar) {
    const uint32_t k = findk_halved(last, first > 1);
    maxValue = minValue = ((k > 8 ? k : 8) + first * 8) * 4 + 256;
    return;
  }
  maxValue = minValue = findk_halved(first, first > 1) * ((last * 4 + 31) / 32 * 32);
}
// ReduceAny / ReduceAll (reduce_tiling.cpp:155-179, 266-300): float as ReduceMax's; uint8_t AR align32(last) x 2 +
// first x 32 (isReuseSource too), RA k x align32(last), 0 with isReuseSource
inline void GetReduceAnyAllTmpSize(const char* api, const ge::Shape& srcShape, const ge::DataType dataType,
                                   ReducePattern pattern, bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue,
                                   uint32_t& minValue) {
  using namespace reduce_pattern_detail;
  if (!shape_ok(api, srcShape, dataType == ge::DT_FLOAT || dataType == ge::DT_UINT8, "float or uint8_t", pattern,
                isSrcInnerPad))
    return;
  if (dataType == ge::DT_FLOAT) {
    sizes(api, srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue, minValue);
    return;
  }
  const uint32_t first = uint32_t(srcShape.GetDim(0)), last = uint32_t(srcShape.GetDim(1));
  if (pattern == ReducePattern::AR) {
    maxValue = minValue = (last + 31) / 32 * 32 * 2 + first * 32;
    return;
  }
  maxValue = minValue = isReuseSource ? 0 : findk_halved(first, first > 1) * ((last + 31) / 32 * 32);
}
inline void GetReduceAnyMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                      bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  GetReduceAnyAllTmpSize("ReduceAny", srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue, minValue);
}
inline void GetReduceAllMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                      bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  GetReduceAnyAllTmpSize("ReduceAll", srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue, minValue);
}

inline void GetReduceSumMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                      bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  reduce_pattern_detail::sum_sizes(srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue, minValue);
}

inline void GetReduceMaxMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                      bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  reduce_pattern_detail::sizes("ReduceMax", srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue,
                               minValue);
}
inline void GetReduceMinMaxMinTmpSize(const ge::Shape& srcShape, const ge::DataType dataType, ReducePattern pattern,
                                      bool isSrcInnerPad, bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  reduce_pattern_detail::sizes("ReduceMin", srcShape, dataType, pattern, isSrcInnerPad, isReuseSource, maxValue,
                               minValue);
}
}  // namespace AscendC
