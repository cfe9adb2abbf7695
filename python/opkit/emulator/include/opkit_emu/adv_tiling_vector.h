// Kernel side of the advanced vector APIs' tiling structs (CANN's generated kernel_tiling/kernel_tiling.h: each
// `#pragma pack(push, 8)` in namespace AscendC::tiling, members zero-initialised, exported at global scope;
// mirror-cann/asc-devkit 82b89a15 impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py). Field lists (names,
// types, order) as the *_tilingdata.h registrations cited on each struct. An op's tiling struct declares one of
// these (TILING_DATA_FIELD_DEF_STRUCT) for an API its A2 kernel may never call (ops-nn layer_norm_v4 declares a
// LayerNormSeparateTiling its arch35 kernel reads): declaring it compiles; the API itself, where the emulator does
// not implement it, is an ordinary compile error naming it. Reached through kernel_tiling/kernel_tiling.h only,
// as the global names would otherwise collide with a kernel's own structs of the same name.
#pragma once
#include <cstdint>

#include "opkit_emu/adv_tiling_rmsnorm.h"

namespace AscendC {
namespace tiling {
#pragma pack(push, 8)
// asc-devkit 82b89a15 include/adv_api/pad/pad_tilingdata.h:21-30
struct UnPadTiling {
  uint32_t srcHeight = 0;
  uint32_t srcWidth = 0;
  uint32_t tmpBuffer1BlockNum = 0;
  uint32_t tmpBuffer1RowNum = 0;
  uint32_t tmpBuffer2Offset = 0;
  uint32_t widthTiling = 0;
  uint32_t widthFractal = 0;
  uint32_t widthFractalTail = 0;
};
// asc-devkit 82b89a15 include/adv_api/pad/pad_tilingdata.h:32-63
struct PadTiling {
  uint32_t srcHeight = 0;
  uint32_t srcWidth = 0;
  uint32_t srcOriWidth = 0;
  uint32_t widthWithoutLastBlock = 0;
  uint32_t blocksPerRow = 0;
  uint32_t heightTiling = 0;
  uint32_t heightFractal = 0;
  uint32_t heightFractalTail = 0;
  uint32_t mainLoopOffset = 0;
  uint32_t tailBlockOffset = 0;
  uint32_t tmpBuffer1BlockNum = 0;
  uint32_t tmpBuffer1RowNum = 0;
  uint32_t tmpBuffer2Offset = 0;
  uint32_t widthTiling = 0;
  uint32_t widthFractal = 0;
  uint32_t widthFractalTail = 0;
  uint32_t widthFractalTailAlingned = 0;
  uint32_t brcbTiling = 0;
  uint32_t brcbFractal = 0;
  uint32_t brcbFractalTail = 0;
  uint32_t maxRepeatTimes = 0;
  uint32_t brcbTilingRepeatTimes = 0;
  uint32_t brcbTilingRepeatTimesTail = 0;
  uint32_t brcbFractalTailRepeatTimes = 0;
  uint32_t brcbFractalTailRepeatTimesTail = 0;
  uint32_t reserved = 0;
};
// asc-devkit 82b89a15 include/adv_api/sort/topk_tilingdata.h:15-48
struct TopkTiling {
  int32_t tmpLocalSize = 0;
  int32_t allDataSize = 0;
  int32_t innerDataSize = 0;
  uint32_t sortRepeat = 0;
  int32_t mrgSortRepeat = 0;
  int32_t kAlignFourBytes = 0;
  int32_t kAlignTwoBytes = 0;
  int32_t maskOffset = 0;
  int32_t maskVreducev2FourBytes = 0;
  int32_t maskVreducev2TwoBytes = 0;
  int32_t mrgSortSrc1offset = 0;
  int32_t mrgSortSrc2offset = 0;
  int32_t mrgSortSrc3offset = 0;
  int32_t mrgSortTwoQueueSrc1Offset = 0;
  int32_t mrgFourQueueTailPara1 = 0;
  int32_t mrgFourQueueTailPara2 = 0;
  int32_t srcIndexOffset = 0;
  uint32_t copyUbToUbBlockCount = 0;
  int32_t topkMrgSrc1MaskSizeOffset = 0;
  int32_t topkNSmallSrcIndexOffset = 0;
  uint32_t vreduceValMask0 = 0;
  uint32_t vreduceValMask1 = 0;
  uint32_t vreduceIdxMask0 = 0;
  uint32_t vreduceIdxMask1 = 0;
  uint16_t vreducehalfValMask0 = 0;
  uint16_t vreducehalfValMask1 = 0;
  uint16_t vreducehalfValMask2 = 0;
  uint16_t vreducehalfValMask3 = 0;
  uint16_t vreducehalfValMask4 = 0;
  uint16_t vreducehalfValMask5 = 0;
  uint16_t vreducehalfValMask6 = 0;
  uint16_t vreducehalfValMask7 = 0;
};
// LayerNormTiling and DeepNormTiling are the same fields in CANN (two structs, one layout)
#define OPKIT_LAYERNORM_TILING_FIELDS \
  uint32_t bLength = 0; \
  uint32_t sLength = 0; \
  uint32_t hLength = 0; \
  uint32_t originalHLength = 0; \
  uint32_t inputXSize = 0; \
  uint32_t meanVarSize = 0; \
  uint32_t numberOfTmpBuf = 0; \
  uint32_t meanTmpTensorPos = 0; \
  uint32_t meanTmpTensorSize = 0; \
  uint32_t varianceTmpTensorPos = 0; \
  uint32_t varianceTmpTensorSize = 0; \
  uint32_t tmpBufSize = 0; \
  uint32_t oneTmpSize = 0; \
  uint32_t firstTmpStartPos = 0; \
  uint32_t secondTmpStartPos = 0; \
  uint32_t thirdTmpStartPos = 0; \
  uint32_t loopRound = 0; \
  uint32_t inputRoundSize = 0; \
  uint32_t inputTailSize = 0; \
  uint32_t inputTailPos = 0; \
  uint32_t meanVarRoundSize = 0; \
  uint32_t meanVarTailSize = 0; \
  uint32_t meanVarTailPos = 0; \
  uint32_t bshCurLength = 0; \
  uint32_t bsCurLength = 0; \
  float lastDimValueBack = 0;
// asc-devkit 82b89a15 include/adv_api/normalization/layernorm_tilingdata.h:21-48
struct LayerNormTiling {
  OPKIT_LAYERNORM_TILING_FIELDS
};
// asc-devkit 82b89a15 include/adv_api/normalization/layernorm_tilingdata.h:50-77
struct LayerNormSeparateTiling {
  uint32_t aLength = 0;
  uint32_t rLength = 0;
  uint32_t halfAddRepeatTimes = 0;
  uint32_t rHeadLength = 0;
  float k2Rec = 0;
  float k2RRec = 0;
  uint32_t inputXSize = 0;
  uint32_t meanVarSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t varianceTmpTensorSize = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputRoundSize = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarRoundSize = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t arCurLength = 0;
  uint32_t aCurLength = 0;
  float rValueBack = 0;
};
// asc-devkit 82b89a15 include/adv_api/normalization/layernorm_grad_beta_tilingdata.h:21-42
struct LayerNormGradBetaTiling {
  uint32_t stackBufferSize = 0;
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  uint32_t bshLength = 0;
  uint32_t bsLength = 0;
  uint32_t oneCalSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t loopRound = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t bsTailSize = 0;
  uint32_t bshCurLength = 0;
  uint32_t bsCurLength = 0;
  uint32_t gammaTempTensorPos = 0;
  uint32_t betaTempTensorPos = 0;
  uint32_t inputDyTmpTensorPos = 0;
  uint32_t resForGammaTmpTensorPos = 0;
  uint32_t reserved = 0;
};
// RmsNormTiling: opkit_emu/adv_tiling_rmsnorm.h (lib/normalization/rmsnorm.h exports it alone, as CANN does)
// asc-devkit 82b89a15 include/adv_api/normalization/batchnorm_tilingdata.h:16-37
struct BatchNormTiling {
  uint32_t originalBLength = 0;
  uint32_t meanVarSize = 0;
  uint32_t meanTmpTensorPos = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t bshCurLength = 0;
  uint32_t shCurLength = 0;
  float firstDimValueBack = 0;
  uint32_t castHalfRepStride = 0;
  uint32_t shCurLengthBlockNum = 0;
  uint32_t castHalfOutRepStride = 0;
};
// asc-devkit 82b89a15 include/adv_api/normalization/groupnorm_tilingdata.h:21-52
struct GroupNormTiling {
  uint32_t n = 0;
  uint32_t c = 0;
  uint32_t hw = 0;
  uint32_t g = 0;
  uint32_t d = 0;
  uint32_t hwAlignSize = 0;
  uint32_t dhwAlignSize = 0;
  uint32_t inputXSize = 0;
  uint32_t meanVarSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t meanTmpTensorPos = 0;
  uint32_t meanTmpTensorSize = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t varianceTmpTensorSize = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputRoundSize = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarRoundSize = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t bshCurLength = 0;
  uint32_t bsCurLength = 0;
  float factor = 0;
  bool smallShape = false;
};
// asc-devkit 82b89a15 include/adv_api/normalization/deepnorm_tilingdata.h:17-46
struct DeepNormTiling {
  OPKIT_LAYERNORM_TILING_FIELDS
};
// asc-devkit 82b89a15 include/adv_api/normalization/layernorm_grad_tilingdata.h:21-52
struct LayerNormGradTiling {
  uint32_t stackBufferSize = 0;
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  uint32_t oneCalSize = 0;
  uint32_t nohCalSize = 0;
  uint32_t loopNum = 0;
  uint32_t tailSize = 0;
  uint32_t nohTailSize = 0;
  uint32_t tmpTensorBSHPos = 0;
  uint32_t tmpTensorBSHSize = 0;
  uint32_t pdVarTensorPos = 0;
  uint32_t pdVarTensorSize = 0;
  uint32_t pdMeanTensorPos = 0;
  uint32_t pdMeanTensorSize = 0;
  uint32_t x1TensorPos = 0;
  uint32_t x1TensorSize = 0;
  uint32_t x2TensorPos = 0;
  uint32_t x2TensorSize = 0;
  uint32_t x3TensorPos = 0;
  uint32_t x3TensorSize = 0;
  uint32_t tmpTensorPos = 0;
  uint32_t tmpTensorSize = 0;
  uint32_t tmpTensor1Pos = 0;
  uint32_t tmpTensor1Size = 0;
  uint32_t tmpTensor2Pos = 0;
  uint32_t tmpTensor2Size = 0;
  uint32_t lastDimValueBack = 0;
  uint32_t lastDimValueBackMulTwo = 0;
};
// asc-devkit 82b89a15 include/adv_api/transpose/confusion_transpose_tilingdata.h:21-40
struct ConfusionTransposeTiling {
  uint32_t param0 = 0;
  uint32_t param1 = 0;
  uint32_t param2 = 0;
  uint32_t param3 = 0;
  uint32_t param4 = 0;
  uint32_t param5 = 0;
  uint32_t param6 = 0;
  uint32_t param7 = 0;
  uint32_t param8 = 0;
  uint32_t param9 = 0;
  uint32_t param10 = 0;
  uint32_t param11 = 0;
  uint32_t param12 = 0;
  uint32_t param13 = 0;
  uint32_t param14 = 0;
  uint32_t param15 = 0;
  uint32_t param16 = 0;
  uint32_t param17 = 0;
};
#pragma pack(pop)
}  // namespace tiling
}  // namespace AscendC

using AscendC::tiling::UnPadTiling;
using AscendC::tiling::PadTiling;
using AscendC::tiling::TopkTiling;
using AscendC::tiling::LayerNormTiling;
using AscendC::tiling::LayerNormSeparateTiling;
using AscendC::tiling::LayerNormGradBetaTiling;
using AscendC::tiling::RmsNormTiling;
using AscendC::tiling::BatchNormTiling;
using AscendC::tiling::GroupNormTiling;
using AscendC::tiling::DeepNormTiling;
using AscendC::tiling::LayerNormGradTiling;
using AscendC::tiling::ConfusionTransposeTiling;
