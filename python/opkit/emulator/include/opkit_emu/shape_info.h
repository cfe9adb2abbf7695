// DataFormat, ShapeInfo and GetShapeSize as CANN declares them (mirror-cann/asc-devkit 82b89a15:
// include/basic_api/kernel_struct_data_copy.h, include/basic_api/kernel_tensor.h; docs
// 数据结构/ShapeInfo.md, LocalTensor/SetShapeInfo.md, GetShapeInfo.md). A tensor's shape is metadata only (no
// API here reads it); LocalTensor / GlobalTensor keep it as a small index into the block's table of the
// shapes set so far, so copying a tensor stays cheap and a copy carries the shape, as CANN's copies do.
#pragma once
#include <cstdint>
#include <cstring>

#include "opkit_emu/diag.h"

namespace AscendC {

#ifndef OPKIT_ASCENDC_DATAFORMAT  // the host stand-in's TransData tiling declares the same enum (one .asc TU has both)
#define OPKIT_ASCENDC_DATAFORMAT
enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };
#endif

#ifndef K_MAX_SHAPE_DIM
#define K_MAX_SHAPE_DIM 8
#endif

struct ShapeInfo;

}  // namespace AscendC

namespace opkit_emu {
// CANN's CPU mode asserts (ASCENDC_ASSERT) when a shape has more than K_MAX_SHAPE_DIM dimensions: rule
// kernel-assert (defined in tensor.h, after the block state).
[[noreturn]] void shape_dim_error(unsigned dim, SrcLoc loc);
}  // namespace opkit_emu

namespace AscendC {

struct ShapeInfo {
  ShapeInfo() {}
  ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const uint8_t inputOriginalShapeDim,
            const uint32_t inputOriginalShape[], const DataFormat inputFormat, OPKIT_LOC)
      : shapeDim(inputShapeDim), originalShapeDim(inputOriginalShapeDim), dataFormat(inputFormat) {
    check(inputShapeDim, loc);
    check(inputOriginalShapeDim, loc);
    for (int i = 0; i < shapeDim; ++i) shape[i] = inputShape[i];
    for (int i = 0; i < originalShapeDim; ++i) originalShape[i] = inputOriginalShape[i];
  }
  ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const DataFormat inputFormat, OPKIT_LOC)
      : shapeDim(inputShapeDim), originalShapeDim(inputShapeDim), dataFormat(inputFormat) {
    check(inputShapeDim, loc);
    for (int i = 0; i < shapeDim; ++i) shape[i] = originalShape[i] = inputShape[i];
  }
  ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], OPKIT_LOC)
      : ShapeInfo(inputShapeDim, inputShape, DataFormat::ND, loc) {}

  uint8_t shapeDim = 0;
  uint8_t originalShapeDim = 0;
  uint32_t shape[K_MAX_SHAPE_DIM] = {};
  uint32_t originalShape[K_MAX_SHAPE_DIM] = {};
  DataFormat dataFormat = DataFormat::ND;

  bool same(const ShapeInfo& o) const {
    return shapeDim == o.shapeDim && originalShapeDim == o.originalShapeDim && dataFormat == o.dataFormat &&
           std::memcmp(shape, o.shape, sizeof(shape)) == 0 &&
           std::memcmp(originalShape, o.originalShape, sizeof(originalShape)) == 0;
  }

 private:
  static void check(unsigned dim, opkit_emu::SrcLoc loc) {
    if (dim > K_MAX_SHAPE_DIM) opkit_emu::shape_dim_error(dim, loc);
  }
};

inline uint64_t GetShapeSize(const ShapeInfo& shapeInfo) {
  uint64_t n = 1;
  for (int i = 0; i < shapeInfo.shapeDim; ++i) n *= shapeInfo.shape[i];
  return n;
}

}  // namespace AscendC
