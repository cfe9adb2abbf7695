// Host side of CANN's temporary-buffer queries for the activation family (lib/activation/{gelu,geglu,swiglu,swish,
// silu}.h), written after asc-devkit 82b89a15 impl/adv_api/tiling/activation/<name>_tiling*.cpp (read, not copied).
// The `min` of each is what the kernel side accepts; the signatures are CANN's (include/adv_api/activation/
// <name>_tiling.h), argument order included (SwiGLU's isReuseSource comes last).
#pragma once
#include <algorithm>
#include <cstdint>

#include "opkit_cann/host.h"

namespace AscendC {
// gelu_tiling_impl.cpp:15-41: min 3 repeats; max 3 floats per element, at least min (Gelu, FasterGelu, FasterGeluV2)
inline uint32_t GetGeluMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize) {
  (void)srcShape;
  (void)typeSize;
  return 3 * 256;
}
inline uint32_t GetGeluMaxTmpSize(const ge::Shape& srcShape, const uint32_t typeSize) {
  const uint32_t mx = 3 * static_cast<uint32_t>(srcShape.GetShapeSize()) * static_cast<uint32_t>(sizeof(float));
  return std::max(GetGeluMinTmpSize(srcShape, typeSize), mx);
}
inline void GetGeluMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                 uint32_t& minValue) {
  maxValue = GetGeluMaxTmpSize(srcShape, typeSize);
  minValue = GetGeluMinTmpSize(srcShape, typeSize);
}

namespace adv_tmp_detail {
// geglu_tiling.cpp:17-26 / swiglu_tiling.cpp:16-25: nodes x max(n * size, 256) bytes, min nodes x 256
inline void glu_sizes(const ge::Shape& s, uint32_t typeSize, uint32_t nodes, uint32_t& maxValue, uint32_t& minValue) {
  const uint32_t n = static_cast<uint32_t>(s.GetShapeSize());
  if (n == 0) return;  // CANN asserts a positive size and returns
  minValue = nodes * 256;
  maxValue = nodes * std::max(n * typeSize, 256u);
}
}  // namespace adv_tmp_detail

// geglu_tiling.cpp:10-11,28-45: live nodes float 0, half 4
inline void GetGeGLUMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  adv_tmp_detail::glu_sizes(srcShape, typeSize, typeSize == sizeof(float) ? 0 : 4, maxValue, minValue);
}
inline void GetGeGLUTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  extraBuf = 0;
  maxLiveNodeCount = typeSize == sizeof(float) ? 0 : 4;
}

// swiglu_tiling.cpp:8-9,27-44: live nodes float 0, half 6
inline void GetSwiGLUMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                   uint32_t& minValue, const bool isReuseSource) {
  (void)isReuseSource;
  adv_tmp_detail::glu_sizes(srcShape, typeSize, typeSize == sizeof(float) ? 0 : 6, maxValue, minValue);
}
inline void GetSwiGLUTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer) {
  extraBuffer = 0;
  maxLiveNodeCount = typeSize == sizeof(float) ? 0 : 6;
}

// swish_tiling.cpp / silu_tiling.cpp: no buffer
inline void GetSwishTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                            uint32_t& maxValue, uint32_t& minValue) {
  (void)srcShape, (void)typeSize, (void)isReuseSource;
  maxValue = minValue = 0;
}
inline void GetSiluTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                           uint32_t& maxValue, uint32_t& minValue) {
  (void)srcShape, (void)typeSize, (void)isReuseSource;
  maxValue = minValue = 0;
}
}  // namespace AscendC
