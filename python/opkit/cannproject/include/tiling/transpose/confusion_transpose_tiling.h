// Host side of CANN's Transpose (ConfusionTranspose) tiling (asc-devkit 82b89a15
// include/adv_api/transpose/confusion_transpose_tiling.h, the struct confusion_transpose_tilingdata.h: param0..param17),
// reached through tiling/tiling_api.h as CANN's includes "transpose/confusion_transpose_tiling.h":
// optiling::ConfusionTransposeTiling, GetTransposeTilingInfo / GetConfusionTransposeTilingInfo and
// GetTransposeMaxMinTmpSize / GetConfusionTransposeMaxMinTmpSize (both struct overloads), written after
// impl/adv_api/tiling/transpose/confusion_transpose_tiling_impl.cpp (read, not copied) for the types whose kernel the
// emulator runs: scene 1 / 2 (TRANSPOSE_NZ2ND_0213 = 1, TRANSPOSE_NZ2NZ_0213 = 2; :58-100, :320-328) and scene 7
// (TRANSPOSE_ND2ND_ONLY = 7; :229-249, :354-361). Another type prints that its kernel is not emulated and
// leaves the tiling as it was; the kernel then stops with not-emulated naming it.
#pragma once
#include <cstdint>
#include <cstdio>

#include "opkit/adv_tiling_structs.h"
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ConfusionTransposeTiling)
TILING_DATA_FIELD_DEF(uint32_t, param0);
TILING_DATA_FIELD_DEF(uint32_t, param1);
TILING_DATA_FIELD_DEF(uint32_t, param2);
TILING_DATA_FIELD_DEF(uint32_t, param3);
TILING_DATA_FIELD_DEF(uint32_t, param4);
TILING_DATA_FIELD_DEF(uint32_t, param5);
TILING_DATA_FIELD_DEF(uint32_t, param6);
TILING_DATA_FIELD_DEF(uint32_t, param7);
TILING_DATA_FIELD_DEF(uint32_t, param8);
TILING_DATA_FIELD_DEF(uint32_t, param9);
TILING_DATA_FIELD_DEF(uint32_t, param10);
TILING_DATA_FIELD_DEF(uint32_t, param11);
TILING_DATA_FIELD_DEF(uint32_t, param12);
TILING_DATA_FIELD_DEF(uint32_t, param13);
TILING_DATA_FIELD_DEF(uint32_t, param14);
TILING_DATA_FIELD_DEF(uint32_t, param15);
TILING_DATA_FIELD_DEF(uint32_t, param16);
TILING_DATA_FIELD_DEF(uint32_t, param17);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace transpose_host_detail {
constexpr uint32_t kCube = 16, kCubeSize = 256, kBlk = 32;
constexpr uint32_t kNz2Nd0213 = 1, kNz2Nz0213 = 2, kNd2NdOnly = 7;
inline void not_emulated(const char* fn, uint32_t type) {
  std::fprintf(stderr,
               "[Transpose][%s] TransposeType %u: the emulator runs scenes 1, 2 and 7 (TRANSPOSE_NZ2ND_0213, "
               "TRANSPOSE_NZ2NZ_0213, TRANSPOSE_ND2ND_ONLY) only; the tiling is left as it was\n", fn, type);
}
inline bool dims(const char* fn, const ge::Shape& s, size_t n, uint32_t typeSize) {
  if (s.GetDimNum() == n && typeSize > 0) return true;
  std::fprintf(stderr, "[Transpose][%s] srcShape must have %zu dims and typeSize > 0\n", fn, n);
  return false;
}
// scene 1 / 2: srcShape [B, A1, A2, A3] (:58-100)
inline void tiling0213(const ge::Shape& s, uint32_t stack, uint32_t typeSize, optiling::ConfusionTransposeTiling& t) {
  const uint32_t B = uint32_t(s.GetDim(0)), A1 = uint32_t(s.GetDim(1));
  const uint32_t aA2 = (uint32_t(s.GetDim(2)) + kCube - 1) / kCube * kCube;
  const uint32_t wt = (uint32_t(s.GetDim(3)) + kCube - 1) / kCube, aA3 = wt * kCube;
  const uint32_t pop = stack / typeSize / kCubeSize * kCubeSize;  // the buffer in whole 16 x 16 fractals
  const uint32_t popH = pop / kCube, need = aA2 * kCube, mainBlocks = pop ? need / pop : 0, tail = pop ? need % pop : 0;
  t.set_param0(kBlk / typeSize);
  t.set_param1(B);
  t.set_param2(A1);
  t.set_param3(aA3);
  t.set_param4(aA2);
  t.set_param5(wt);
  t.set_param6(pop);
  t.set_param7(popH);
  t.set_param8(need);
  t.set_param9(mainBlocks);
  t.set_param10(tail);
  t.set_param11(aA2 * aA3);
  t.set_param12(A1 * aA2 * aA3);
  t.set_param13(A1 * aA3);
  t.set_param14(A1 * kCube);
  t.set_param15(popH * mainBlocks * A1 * aA3);
}
// scene 7: srcShape [H, W] (:229-249)
inline void tiling_only(const ge::Shape& s, uint32_t typeSize, optiling::ConfusionTransposeTiling& t) {
  const uint32_t bs = kBlk / typeSize, h = uint32_t(s.GetDim(0)), w = uint32_t(s.GetDim(1));
  t.set_param0(bs);
  t.set_param1(h);
  t.set_param2(w);
  t.set_param3(h / kCube);
  t.set_param4(h * bs * typeSize / kBlk);
  t.set_param5(w / bs);
}
}  // namespace transpose_host_detail

inline void GetTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                   const uint32_t transposeTypeIn, optiling::ConfusionTransposeTiling& tiling) {
  using namespace transpose_host_detail;
  if (transposeTypeIn == kNz2Nd0213 || transposeTypeIn == kNz2Nz0213) {
    if (dims("GetTransposeTilingInfo", srcShape, 4, typeSize)) tiling0213(srcShape, stackBufferSize, typeSize, tiling);
  } else if (transposeTypeIn == kNd2NdOnly) {
    if (dims("GetTransposeTilingInfo", srcShape, 2, typeSize)) tiling_only(srcShape, typeSize, tiling);
  } else {
    not_emulated("GetTransposeTilingInfo", transposeTypeIn);
  }
}
inline void GetTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                   const uint32_t transposeTypeIn, AscendC::tiling::ConfusionTransposeTiling& tiling) {
  optiling::ConfusionTransposeTiling fresh;  // as CANN: a fresh struct, copied over the caller's
  GetTransposeTilingInfo(srcShape, stackBufferSize, typeSize, transposeTypeIn, fresh);
  fresh.SaveToBuffer(&tiling, sizeof(AscendC::tiling::ConfusionTransposeTiling));
}
inline void GetConfusionTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                            const uint32_t typeSize, const uint32_t transposeTypeIn,
                                            optiling::ConfusionTransposeTiling& tiling) {
  GetTransposeTilingInfo(srcShape, stackBufferSize, typeSize, transposeTypeIn, tiling);
}
inline void GetConfusionTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                            const uint32_t typeSize, const uint32_t transposeTypeIn,
                                            AscendC::tiling::ConfusionTransposeTiling& tiling) {
  GetTransposeTilingInfo(srcShape, stackBufferSize, typeSize, transposeTypeIn, tiling);
}

// :320-328 (scene 1 / 2: max the whole aligned A2 x 16 column, min one fractal), :354-361 (scene 7: none)
inline void GetTransposeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                      const uint32_t transposeTypeIn, uint32_t& maxValue, uint32_t& minValue) {
  using namespace transpose_host_detail;
  if (transposeTypeIn == kNz2Nd0213 || transposeTypeIn == kNz2Nz0213) {
    if (!dims("GetTransposeMaxMinTmpSize", srcShape, 4, typeSize)) return;
    const uint32_t aA2 = (uint32_t(srcShape.GetDim(2)) + kCube - 1) / kCube * kCube;
    maxValue = aA2 * kCube * typeSize;
    minValue = kCubeSize * typeSize;
  } else if (transposeTypeIn == kNd2NdOnly) {
    maxValue = minValue = 0;
  } else {
    not_emulated("GetTransposeMaxMinTmpSize", transposeTypeIn);
  }
}
inline void GetConfusionTransposeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                               const uint32_t transposeTypeIn, uint32_t& maxValue, uint32_t& minValue) {
  GetTransposeMaxMinTmpSize(srcShape, typeSize, transposeTypeIn, maxValue, minValue);
}
}  // namespace AscendC
