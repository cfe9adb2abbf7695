// Host side of CANN's LayerNormGrad tiling (asc-devkit 82b89a15 include/adv_api/normalization/
// layernorm_grad_tiling.h, the struct layernorm_grad_tilingdata.h), reached through tiling/tiling_api.h:
// GetLayerNormGradMaxMinTmpSize and GetLayerNormGradNDTilingInfo of the [B, S, H, originalH] form, written after
// impl/adv_api/tiling/normalization/layernorm_grad_tiling_impl.cpp:28-199 (read, not copied; the A2 branch). The
// kernel runs LayerNormGrad on the emulator (lib/normalization/layernormgrad.h). A shape that is not 4-D with
// positive dims, or a type size other than 2 / 4, leaves the outputs untouched with a message on stderr, as
// CANN's ASCENDC_HOST_ASSERT returns.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "layernorm_tiling.h"  // AscendC::TensorShape
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LayerNormGradTiling)
TILING_DATA_FIELD_DEF(uint32_t, stackBufferSize);
TILING_DATA_FIELD_DEF(uint32_t, bLength);
TILING_DATA_FIELD_DEF(uint32_t, sLength);
TILING_DATA_FIELD_DEF(uint32_t, hLength);
TILING_DATA_FIELD_DEF(uint32_t, originalHLength);
TILING_DATA_FIELD_DEF(uint32_t, oneCalSize);
TILING_DATA_FIELD_DEF(uint32_t, nohCalSize);
TILING_DATA_FIELD_DEF(uint32_t, loopNum);
TILING_DATA_FIELD_DEF(uint32_t, tailSize);
TILING_DATA_FIELD_DEF(uint32_t, nohTailSize);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorBSHPos);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorBSHSize);
TILING_DATA_FIELD_DEF(uint32_t, pdVarTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, pdVarTensorSize);
TILING_DATA_FIELD_DEF(uint32_t, pdMeanTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, pdMeanTensorSize);
TILING_DATA_FIELD_DEF(uint32_t, x1TensorPos);
TILING_DATA_FIELD_DEF(uint32_t, x1TensorSize);
TILING_DATA_FIELD_DEF(uint32_t, x2TensorPos);
TILING_DATA_FIELD_DEF(uint32_t, x2TensorSize);
TILING_DATA_FIELD_DEF(uint32_t, x3TensorPos);
TILING_DATA_FIELD_DEF(uint32_t, x3TensorSize);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensorSize);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor1Pos);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor1Size);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor2Pos);
TILING_DATA_FIELD_DEF(uint32_t, tmpTensor2Size);
TILING_DATA_FIELD_DEF(uint32_t, lastDimValueBack);
TILING_DATA_FIELD_DEF(uint32_t, lastDimValueBackMulTwo);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace layernorm_grad_detail {
// float buffers of oneCalSize each (layernorm_grad_tiling.h:27-29)
inline uint32_t buffers(uint32_t typeSize, bool reuse) { return typeSize == 2 ? 9 : reuse ? 4 : 6; }
inline bool check(const char* fn, const ge::Shape& s, uint32_t typeSize) {
  bool dims = s.GetDimNum() == 4;
  for (size_t i = 0; dims && i < 4; ++i) dims = s.GetDim(i) > 0;
  const char* why = typeSize != 2 && typeSize != 4 ? "typeSize must be 2 (half) or 4 (float)"
                    : !dims ? "srcShape must be 4-D [B, S, storageHLength, originHLength], each dim > 0"
                            : nullptr;
  if (why) std::fprintf(stderr, "[LayerNormGrad][%s] %s\n", fn, why);
  return why == nullptr;
}
}  // namespace layernorm_grad_detail

inline void GetLayerNormGradMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                          uint32_t& maxValue, uint32_t& minValue) {
  using namespace layernorm_grad_detail;
  if (!check("GetLayerNormGradMaxMinTmpSize", srcShape, typeSize)) return;
  const uint32_t h = uint32_t(srcShape.GetDim(2)), bsh = uint32_t(srcShape.GetDim(0) * srcShape.GetDim(1)) * h;
  const uint32_t n = buffers(typeSize, isReuseSource);
  maxValue = n * std::max(bsh, h * h) * typeSize;
  minValue = n * std::min(bsh, h * h) * typeSize;
}

inline void GetLayerNormGradNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                         const uint32_t typeSize, const bool isReuseSource,
                                         optiling::LayerNormGradTiling& tiling) {
  using namespace layernorm_grad_detail;
  if (!check("GetLayerNormGradNDTilingInfo", srcShape, typeSize)) return;
  const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  const uint32_t oriH = uint32_t(srcShape.GetDim(3)), total = b * s * h;
  uint32_t one = stackBufferSize / 4 / buffers(typeSize, isReuseSource) / h * h;
  if (one == 0) {
    std::fprintf(stderr, "[LayerNormGrad][GetLayerNormGradNDTilingInfo] stackBufferSize is not enough.\n");
    return;
  }
  const uint32_t perBlk = typeSize == 4 ? 8 : 16;
  const uint32_t noh = (one / h + perBlk - 1) / perBlk * perBlk;  // rounded up to a block of rows, as CANN does
  one = noh * h;
  // the float buffers, oneCalSize apart (SetTensorInfo :55-85)
  const uint32_t pdVar = one, pdMean = 2 * one;
  uint32_t x1 = 0, x2 = 0, x3 = 3 * one;
  if (!(isReuseSource && typeSize == 4)) x1 = 3 * one, x2 = 4 * one, x3 = 5 * one;
  uint32_t t0 = 0, t1 = 0, t2 = 0;
  if (typeSize == 2) t0 = x3 + one, t1 = t0 + one, t2 = t1 + one;
  tiling.set_tmpTensorBSHPos(0);
  tiling.set_pdVarTensorPos(pdVar);
  tiling.set_pdMeanTensorPos(pdMean);
  tiling.set_x1TensorPos(x1);
  tiling.set_x2TensorPos(x2);
  tiling.set_x3TensorPos(x3);
  tiling.set_tmpTensorPos(t0);
  tiling.set_tmpTensor1Pos(t1);
  tiling.set_tmpTensor2Pos(t2);
  tiling.set_tmpTensorBSHSize(one);
  tiling.set_pdVarTensorSize(one);
  tiling.set_pdMeanTensorSize(one);
  tiling.set_x1TensorSize(one);
  tiling.set_x2TensorSize(one);
  tiling.set_x3TensorSize(one);
  tiling.set_tmpTensorSize(one);
  tiling.set_tmpTensor1Size(one);
  tiling.set_tmpTensor2Size(one);
  const float back = 1.0f / static_cast<float>(oriH), back2 = 2.0f / static_cast<float>(oriH);
  uint32_t ub, ub2;  // the struct carries them as float bits
  std::memcpy(&ub, &back, 4);
  std::memcpy(&ub2, &back2, 4);
  tiling.set_stackBufferSize(stackBufferSize);
  tiling.set_bLength(b);
  tiling.set_sLength(s);
  tiling.set_hLength(h);
  tiling.set_originalHLength(oriH);
  tiling.set_oneCalSize(one);
  tiling.set_nohCalSize(noh);
  tiling.set_loopNum(total / one);
  tiling.set_tailSize(total % one);
  tiling.set_nohTailSize(total % one / h);
  tiling.set_lastDimValueBack(ub);
  tiling.set_lastDimValueBackMulTwo(ub2);
}
// the overload filling the kernel-side struct (layernorm_grad_tiling_impl.cpp:201-208)
inline void GetLayerNormGradNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                         const uint32_t typeSize, const bool isReuseSource,
                                         AscendC::tiling::LayerNormGradTiling& tiling) {
  optiling::LayerNormGradTiling t;
  GetLayerNormGradNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, t);
  t.SaveToBuffer(&tiling, sizeof(tiling));
}
}  // namespace AscendC
