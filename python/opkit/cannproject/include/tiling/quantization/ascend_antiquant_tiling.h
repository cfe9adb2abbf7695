// Host side of CANN's AscendAntiQuant buffer queries (asc-devkit 82b89a15 include/adv_api/quantization/
// ascend_antiquant_tiling.h), reached through tiling/tiling_api.h as CANN's includes
// "quantization/ascend_antiquant_tiling.h"; written after impl/adv_api/tiling/quantization/
// ascend_antiquant_tiling_impl.cpp:57-150 (read, not copied): a half result needs no buffer; bfloat16_t needs, per
// channel, scaleSize x 2 floats + 64 x K floats (K = srcShape[0]; transposed: 80 x scaleSize floats), per tensor 1024
// bytes at least (max srcSize floats). The float4 inputs (Ascend 950) are not handled. CANN reads srcShape[1] in its
// check without testing the rank (CANN's own sample passes a 1-D shape); the stand-in reads it only when present.
#pragma once
#include <cstdint>
#include <cstdio>
#include <vector>

#include "opkit_cann/host.h"

namespace AscendC {
namespace antiquant_host_detail {
inline uint32_t count(const ge::Shape& s) {
  uint32_t n = 1;
  for (size_t i = 0; i < s.GetDimNum(); ++i) n *= static_cast<uint32_t>(s.GetDim(i));
  return n;
}
inline void check(const char* fn, const ge::Shape& src) {
  if (src.GetShapeSize() <= 0)
    std::fprintf(stderr, "[AscendAntiQuant][%s] Input Shape size must be greater than 0.\n", fn);
}
}  // namespace antiquant_host_detail

inline uint32_t GetAscendAntiQuantMaxTmpSize(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                                             ge::DataType inputDataType, ge::DataType outputDataType) {
  using namespace antiquant_host_detail;
  (void)inputDataType;
  check("GetAscendAntiQuantMaxTmpSize", srcShape);
  if (outputDataType == ge::DT_FLOAT16) return 0;
  const uint32_t sc = count(scaleShape), n = count(srcShape);
  if (sc == 1) return n * 4;                       // per tensor
  if (isTranspose) return (8 + 8 + 64) * sc * 4;   // brcb'd scale and offset, 64 x N floats of input
  return sc * 2 * 4 + 64 * static_cast<uint32_t>(srcShape.GetDim(0)) * 4;
}
inline uint32_t GetAscendAntiQuantMinTmpSize(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                                             ge::DataType inputDataType, ge::DataType outputDataType) {
  using namespace antiquant_host_detail;
  (void)inputDataType;
  check("GetAscendAntiQuantMinTmpSize", srcShape);
  if (outputDataType == ge::DT_FLOAT16) return 0;
  const uint32_t sc = count(scaleShape);
  if (sc == 1) return 1024;
  if (isTranspose) return (8 + 8 + 64) * sc * 4;
  return sc * 2 * 4 + 64 * static_cast<uint32_t>(srcShape.GetDim(0)) * 4;
}
inline void GetAscendAntiQuantMaxMinTmpSize(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                                            ge::DataType inputDataType, ge::DataType outputDataType,
                                            uint32_t& maxValue, uint32_t& minValue) {
  maxValue = GetAscendAntiQuantMaxTmpSize(srcShape, scaleShape, isTranspose, inputDataType, outputDataType);
  minValue = GetAscendAntiQuantMinTmpSize(srcShape, scaleShape, isTranspose, inputDataType, outputDataType);
}
// :131-150
inline void GetAscendAntiQuantTmpBufferFactorSize(const ge::Shape& srcShape, const ge::Shape& scaleShape,
                                                  bool isTranspose, ge::DataType inputDataType,
                                                  ge::DataType outputDataType, uint32_t& maxLiveNodeCount,
                                                  uint32_t& extraBuf) {
  (void)inputDataType;
  extraBuf = 0;
  maxLiveNodeCount = 0;
  const uint32_t sc = antiquant_host_detail::count(scaleShape);
  if (outputDataType == ge::DT_FLOAT16) return;
  if (sc == 1) maxLiveNodeCount = 1;
  else if (isTranspose) extraBuf = 80 * sc * 4;
  else extraBuf = sc * 2 * 4 + 64 * static_cast<uint32_t>(srcShape.GetDim(0)) * 4;
}
}  // namespace AscendC
