// SoftmaxFlashV2's kernel-side tiling function (asc-devkit 82b89a15 include/adv_api/activation/softmaxflashv2.h:52-64,
// a constexpr __aicore__ function returning SoftMaxTiling; ops-transformer nsa_selected_attention_infer.h:657 calls
// it in a kernel) and SoftMaxFlashV2TilingFuncImpl, which holds the A2 arithmetic (impl/adv_api/detail/activation/
// softmax/softmax_flashv2_base_impl.h:42-105, CalculateNDSplitM softmax_common/softmax_common_shape_process.h:59-80)
// and which kernels also call directly, the work space already in floats (ops-transformer
// prompt_flash_attention_s1s2_bns1_mla.h:1504, flash_attention_score_s1_bn2gs1.h:1649). As in CANN
// (softmaxflashv2.h:60-62) the wrapper is one call to the Impl with the bytes divided by B32_BYTE_SIZE. Not the host
// function of the same name (softmax_tiling.h:218-227, a void overload filling a tiling by reference). CANN's
// ASCENDC_ASSERT on isFlashOutputBrc's reduceM alignment is api-argument here. Two guards are the emulator's own,
// where CANN divides by zero: a dataTypeSize1 / dataTypeSize2 of 0 (ONE_BLK_SIZE / dataTypeSize2) and a work space
// below one row (srcM / reduceM); both stop with api-argument.
#pragma once
#include <cstdint>

#include "opkit_emu/adv_softmax.h"
#include "opkit_emu/adv_tiling.h"
#include "opkit_emu/diag.h"
#include "opkit/softmax_rows.h"  // the row arithmetic the host stand-in shares

namespace AscendC {
// api: the name an error reports, the wrapper's when it is the caller
constexpr SoftMaxTiling SoftMaxFlashV2TilingFuncImpl(const uint32_t srcM, const uint32_t srcK,
                                                     const uint32_t dataTypeSize1, const uint32_t dataTypeSize2,
                                                     const uint32_t localWorkSpaceSize, const bool isUpdate = false,
                                                     const bool isBasicBlock = false, const bool isDataFormatNZ = false,
                                                     const bool isFlashOutputBrc = false, OPKIT_LOC,
                                                     const char* api = "SoftMaxFlashV2TilingFuncImpl") {
  (void)isUpdate;  // CANN's Impl takes it and reads it nowhere
  constexpr uint32_t kRep = 64, kTile = 8;  // FLOAT_REPEAT_SIZE, SOFTMAX_BASIC_TILE_NUM
  const uint32_t ws = localWorkSpaceSize;  // floats
  if (dataTypeSize1 == 0 || dataTypeSize2 == 0)  // the emulator's guard: CANN divides by dataTypeSize2
    opkit_emu::fail("api-argument", api, loc,
                    opkit_emu::strf("dataTypeSize1 %u / dataTypeSize2 %u: an element size of 0 bytes", dataTypeSize1,
                                    dataTypeSize2));
  namespace rows = ::opkit::softmax_rows;
  const uint32_t blk = 32 / dataTypeSize2;  // ONE_BLK_SIZE / dataTypeSize2
  uint32_t reduceM = 0;
  if (isDataFormatNZ) reduceM = ws / (16 * 3 + srcK);  // SOFTMAX_SHAPE_NZ_BASIC_COUNT x SOFTMAX_NZ_TILING_NEEDBLOCK
  else if (isBasicBlock && srcK % kRep == 0 && srcM % kTile == 0)  // CalculateNDSplitM
    reduceM = rows::basic_block_rows(std::min(dataTypeSize1 == 2 ? ws / (blk + srcK + kRep) : ws / (blk + kRep), srcM),
                                     srcM, srcK);
  else reduceM = dataTypeSize1 == 2 ? ws / (2 * blk + srcK + kRep) : ws / (blk + kRep);  // SOFTMAX_COMPUTE_DIM 2
  reduceM = rows::whole_tiles(reduceM, srcM, isFlashOutputBrc && dataTypeSize1 == 2 ? 16 : kTile);  // HALF_NUM_PER_BLK
  if (reduceM == 0)
    opkit_emu::fail("api-argument", api, loc,
                    opkit_emu::strf("a work space of %u floats (%u bytes) holds no row of [srcM, srcK] = [%u, %u] "
                                    "(CANN then divides by a zero reduceM)", ws, ws * 4, srcM, srcK));
  SoftMaxTiling t;
  rows::fill(t, srcM, srcK, blk, reduceM);
  if (isFlashOutputBrc && (t.rangeM > 1 || t.tailM != 0) && t.reduceM % (32 / dataTypeSize1) != 0)  // MIN_BLOCK_LEN 1
    opkit_emu::fail("api-argument", api, loc,
                    opkit_emu::strf("reduceM %u is not a multiple of %u (dataTypeSize1 %u): CANN's ASCENDC_ASSERT; "
                                    "adjust localWorkSpaceSize", t.reduceM, 32 / dataTypeSize1, dataTypeSize1));
  return t;
}

constexpr SoftMaxTiling SoftMaxFlashV2TilingFunc(const SoftMaxShapeInfo& shapeInfo, const uint32_t dataTypeSize1,
                                                 const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                                 const bool isUpdate = false, const bool isBasicBlock = false,
                                                 const bool isDataFormatNZ = false, const bool isFlashOutputBrc = false,
                                                 OPKIT_LOC) {
  return SoftMaxFlashV2TilingFuncImpl(shapeInfo.srcM, shapeInfo.srcK, dataTypeSize1, dataTypeSize2,
                                      localWorkSpaceSize / 4, isUpdate, isBasicBlock, isDataFormatNZ,  // B32_BYTE_SIZE
                                      isFlashOutputBrc, loc, "SoftMaxFlashV2TilingFunc");
}
}  // namespace AscendC
