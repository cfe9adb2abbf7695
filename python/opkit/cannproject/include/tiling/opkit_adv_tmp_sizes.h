// Host side of CANN's temporary-buffer queries for advanced APIs the emulator runs on the kernel side
// (GetXxxMaxMinTmpSize: how many bytes of sharedTmpBuffer a call needs at least / at most), which a `.asc` program's
// tiling code calls (CANN's examples/01_simd_cpp_api/04_advanced_api/*). Written after asc-devkit 82b89a15
// impl/adv_api/tiling/<family>/<family>_tiling*.cpp (read, not copied; A2 branch); the `min` of each agrees with
// the kernel side's check (python/opkit/emulator/include/lib/math/*.h, AdvTmp). Families not here stop the build at
// g++'s "'GetXxxMaxMinTmpSize' is not a member of 'AscendC'".
#pragma once
#include <algorithm>
#include <cstdint>

#include "opkit_cann/host.h"

namespace AscendC {
namespace adv_tmp_detail {
constexpr uint32_t kRepeat = 256;  // one vector repeat, bytes
inline uint32_t elems(const ge::Shape& s) { return static_cast<uint32_t>(s.GetShapeSize()); }
}  // namespace adv_tmp_detail

// math/acosh_tiling.cpp:21-46: factor 1 (float) / 2 (half) of max(n, 256) elements
inline void GetAcoshMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  const uint32_t f = typeSize == sizeof(float) ? 1 : 2;
  minValue = f * kRepeat;
  maxValue = std::max(f * elems(srcShape), kRepeat) * typeSize;
}

// math/axpy_tiling_impl.cpp: float needs none; half 4 x max(n * size, 256) bytes
inline void GetAxpyMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  if (typeSize == sizeof(float)) {
    maxValue = minValue = 0;
    return;
  }
  const uint32_t bytes = elems(srcShape) * typeSize;
  minValue = 4 * kRepeat;
  maxValue = bytes > kRepeat ? 4 * bytes : 4 * kRepeat;
}

// math/ceil_tiling_impl.cpp: factor 1 (float) / 2 (half) of max(n * size, 256) bytes
inline void GetCeilMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  const uint32_t f = typeSize == sizeof(float) ? 1 : 2;
  minValue = f * kRepeat;
  maxValue = f * std::max(elems(srcShape) * typeSize, kRepeat);
}

// math/frac_tiling_impl.cpp: factor 0 (float) / 4 (half) of max(n * size, 256) bytes
inline void GetFracMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  const uint32_t f = typeSize == sizeof(float) ? 0 : 4;
  minValue = f * kRepeat;
  maxValue = f * std::max(elems(srcShape) * typeSize, kRepeat);
}

// math/exp_tiling_impl.cpp: 4 (half), 3 (float) or 2 (float, isReuseSource) float buffers of max(n, 64) elements
inline bool GetExpMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxValue, uint32_t& minValue) {
  using namespace adv_tmp_detail;
  const uint32_t bufs = typeSize == sizeof(float) ? (isReuseSource ? 2 : 3) : 4;
  minValue = bufs * kRepeat;
  maxValue = bufs * std::max<uint32_t>(elems(srcShape) * sizeof(float), kRepeat);
  return true;
}

// activation/sigmoid_tiling_impl.cpp: max(n * size, 256) bytes, at least 256
inline void GetSigmoidMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  const uint32_t bytes = elems(srcShape) * typeSize;
  maxValue = bytes > kRepeat ? bytes : kRepeat;
  minValue = kRepeat;
}

// reduce/sum_tiling.cpp: one element per 256-byte repeat of the n, padded to a 32-byte block (max = min)
inline void GetSumMaxMinTmpSize(const uint32_t n, const uint32_t typeSize, const bool isReuseSource, uint32_t& maxSize,
                                uint32_t& minSize) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  if (typeSize == 0 || n == 0) return;  // CANN asserts and returns, leaving the outputs as they were
  const uint32_t perBlk = 32 / typeSize, perRep = kRepeat / typeSize;
  const uint32_t repeats = (n + perRep - 1) / perRep;
  maxSize = minSize = (repeats + perBlk - 1) / perBlk * perBlk * typeSize;
}

// quantization/ascend_quant_tiling_impl.cpp: min 2 repeats; max 2 bytes per element (at least 2 repeats), 32-aligned
inline void GetAscendQuantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                        uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)typeSize;
  const uint32_t m = std::max(elems(srcShape) * 2, 2 * kRepeat);
  maxValue = (m + 31) / 32 * 32;
  minValue = 2 * kRepeat;
}

// math/cumsum_tiling.cpp: [outer, inner] (2-D only, inner 32-byte aligned); along the first axis only half needs a
// float copy of the whole; along the last axis two transposes of 16-row groups, plus the half->float cast
inline void GetCumSumMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isLastAxis,
                                   const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  if (srcShape.GetDimNum() != 2 || (typeSize != 2 && typeSize != 4) || srcShape.GetDim(1) <= 0 ||
      (srcShape.GetDim(1) * typeSize) % 32 != 0)
    return;  // CANN asserts: 2-D, half / float, inner axis 32-byte aligned
  const uint32_t outer = static_cast<uint32_t>(srcShape.GetDim(0)), inner = static_cast<uint32_t>(srcShape.GetDim(1));
  if (!isLastAxis) {
    maxValue = minValue = typeSize == 2 ? outer * inner * static_cast<uint32_t>(sizeof(float)) : 0;
    return;
  }
  constexpr uint32_t rows = 16, transposes = 2;
  const uint32_t alignOuter = (outer + rows - 1) / rows * rows;
  const uint32_t castMin = typeSize == 2 ? inner * rows * 2 : 0, castMax = typeSize == 2 ? inner * alignOuter * 2 : 0;
  minValue = castMin + rows * inner * typeSize * transposes;
  maxValue = castMax + alignOuter * inner * typeSize * transposes;
}
// quantization/ascend_dequant_tiling_impl.cpp: [outer, inner] (or [inner]) int32 source; floats: one repeat (64),
// the deqScale copy (inner + 8), and the source rows -- all of them for max, one for min
inline void GetAscendDequantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                          uint32_t& minValue) {
  (void)typeSize;  // CANN asserts 4 (int32)
  uint32_t outer = 1, inner = 0;
  if (srcShape.GetDimNum() == 2) {
    outer = static_cast<uint32_t>(srcShape.GetDim(0));
    inner = static_cast<uint32_t>(srcShape.GetDim(1));
  } else if (srcShape.GetDimNum() == 1) {
    inner = static_cast<uint32_t>(srcShape.GetDim(0));
  } else {
    return;  // CANN asserts 1-D or 2-D and returns
  }
  const uint32_t scale = inner + 8;
  maxValue = (64 + outer * inner + scale) * static_cast<uint32_t>(sizeof(float));
  minValue = (64 + inner + scale) * static_cast<uint32_t>(sizeof(float));
}

// select/selectwithbytesmask_tiling_impl.cpp: the (scalar-aware) source padded to 32 elements as half plus 512
// reserved bytes, at least 1024; min caps the source at a 4096-element basic block; a mask whose last axis differs
// from the source's (and is not reused) adds its padded copy
namespace adv_tmp_detail {
inline uint32_t select_bytes(const ge::Shape& src0, const ge::Shape& src1, const ge::Shape& mask, uint32_t maskTypeSize,
                             bool isReuseMask, bool isMin) {
  auto scalar = [](const ge::Shape& s) { return s.GetDimNum() == 0 || s.GetShapeSize() == 1; };
  auto last = [](const ge::Shape& s) { return s.GetDimNum() ? s.GetDim(s.GetDimNum() - 1) : 1; };
  const bool s0 = scalar(src0);
  const int64_t srcSize = s0 ? src1.GetShapeSize() : src0.GetShapeSize();
  const int64_t maskLast = last(mask), srcLast = s0 ? last(src1) : last(src0);
  const uint32_t cal = static_cast<uint32_t>(isMin && srcSize > 4096 ? 4096 : srcSize);
  const uint32_t padded = (cal + 31) / 32 * 32 * 2;
  uint32_t need = std::max<uint32_t>(1024, padded + 512);
  if (maskLast != srcLast && !isReuseMask && maskLast > 1)
    need += (static_cast<uint32_t>(srcSize) * maskTypeSize + 31) / 32 * 32;
  return need;
}
}  // namespace adv_tmp_detail
inline void GetSelectMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                   const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask,
                                   uint32_t& maxValue, uint32_t& minValue) {
  (void)srcTypeSize;
  maxValue = adv_tmp_detail::select_bytes(src0Shape, src1Shape, maskShape, maskTypeSize, isReuseMask, false);
  minValue = adv_tmp_detail::select_bytes(src0Shape, src1Shape, maskShape, maskTypeSize, isReuseMask, true);
}
inline void GetSelectWithBytesMaskMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape,
                                                const uint32_t srcTypeSize, const ge::Shape& maskShape,
                                                const uint32_t maskTypeSize, const bool isReuseMask,
                                                uint32_t& maxValue, uint32_t& minValue) {
  GetSelectMaxMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask, maxValue, minValue);
}
// math/power_tiling_impl.cpp:229-260, the A2 (DAV_2201) branch: live buffers per interface (tensor-tensor / with
// a scalar; a shape [1] is the scalar) -- half 14 / 14, int32 6 / 7, float 4 / 5 -- of max(n * size, 256) bytes
// (half: of max(n * 2, 128), min halved), float and half plus one 256-byte repeat
inline void GetPowerMaxMinTmpSize(const ge::Shape& srcShape1, const ge::Shape& srcShape2, const bool typeIsInt,
                                  const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                  uint32_t& minValue) {
  using namespace adv_tmp_detail;
  (void)isReuseSource;
  auto tensor = [](const ge::Shape& s) { return !(s.GetDimNum() == 1 && s.GetDim(0) == 1); };
  const bool t1 = tensor(srcShape1), tt = t1 && tensor(srcShape2);
  const uint32_t nodes = typeIsInt ? (tt ? 6 : 7) : typeSize == sizeof(float) ? (tt ? 4 : 5) : (tt ? 14 : 14);
  const uint32_t n = elems(t1 ? srcShape1 : srcShape2);
  const uint32_t per = typeSize == sizeof(float) ? std::max(n * typeSize, kRepeat) : std::max(n * typeSize, kRepeat / 2);
  if (typeIsInt) {
    minValue = kRepeat * nodes;
    maxValue = per * nodes;
  } else if (typeSize == sizeof(float)) {
    minValue = kRepeat * nodes + kRepeat;
    maxValue = per * nodes + kRepeat;
  } else {
    minValue = kRepeat * nodes / 2 + kRepeat;
    maxValue = per * nodes + kRepeat;
  }
}
}  // namespace AscendC
