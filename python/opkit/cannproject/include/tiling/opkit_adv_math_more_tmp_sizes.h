// Host side of CANN's temporary-buffer queries for ClampMin / ClampMax, Fmod and Xor (lib/math/{clamp,fmod,xor}.h),
// written after asc-devkit 82b89a15 impl/adv_api/tiling/math/{clamp_tiling_impl,fmod_tiling_impl,xor_tiling}.cpp
// (read, not copied); signatures from include/adv_api/math/<name>_tiling.h. `min` is what the kernel side accepts.
#pragma once
#include <algorithm>
#include <cstdint>

#include "opkit_cann/host.h"

namespace AscendC {
// clamp_tiling_impl.cpp:5-25: one byte per element, at least 64 (float) / 128 (half)
inline void GetClampMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  const uint32_t n = static_cast<uint32_t>(srcShape.GetShapeSize());
  if (n == 0) return;  // CANN asserts a positive size and returns
  minValue = typeSize == sizeof(float) ? 64 : 128;
  maxValue = std::max(n, minValue);
}
inline void GetClampTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  (void)typeSize;
  extraBuf = 0;
  maxLiveNodeCount = 1;
}

// fmod_tiling_impl.cpp:6-35: Trunc's live buffers (float 1, half 2) plus half's 3 float copies (6), of
// max(n * size, 256) bytes
inline void GetFmodMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                 uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  const uint32_t n = static_cast<uint32_t>(srcShape.GetShapeSize());
  if (n == 0) return;
  const uint32_t nodes = typeSize == sizeof(float) ? 1 : 2 + 6;
  minValue = nodes * 256;
  maxValue = nodes * std::max(n * typeSize, 256u);
}
inline void GetFmodTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  extraBuf = 0;
  maxLiveNodeCount = typeSize == sizeof(float) ? 1 : 2 + 6;
}

// xor_tiling.cpp:5-40: n * size bytes, at least one 256-byte repeat
inline void GetXorMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  minValue = 256;
  maxValue = std::max(static_cast<uint32_t>(srcShape.GetShapeSize()) * typeSize, minValue);
}
inline void GetXorTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer) {
  (void)typeSize;
  extraBuffer = 0;
  maxLiveNodeCount = 1;
}
}  // namespace AscendC

namespace AscendC {
// filter/dropout_tiling_impl.cpp:21-44: min 2 repeats; max 2 floats per element, at least min
inline uint32_t GetDropOutMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource) {
  (void)srcShape, (void)typeSize, (void)isReuseSource;
  return 2 * 256;
}
inline uint32_t GetDropOutMaxTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource) {
  const uint32_t mx = 2 * static_cast<uint32_t>(srcShape.GetShapeSize()) * static_cast<uint32_t>(sizeof(float));
  return std::max(GetDropOutMinTmpSize(srcShape, typeSize, isReuseSource), mx);
}
inline void GetDropOutMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue) {
  maxValue = GetDropOutMaxTmpSize(srcShape, typeSize, isReuseSource);
  minValue = GetDropOutMinTmpSize(srcShape, typeSize, isReuseSource);
}
}  // namespace AscendC
