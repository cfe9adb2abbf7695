// Host side of CANN's LayerNormGradBeta tiling (asc-devkit 82b89a15 include/adv_api/normalization/
// layernorm_grad_beta_tiling.h, the struct layernorm_grad_beta_tilingdata.h), reached through tiling/tiling_api.h:
// GetLayerNormGradBetaMaxMinTmpSize and GetLayerNormGradBetaNDTilingInfo of the [B, S, H, originalH] form, written
// after impl/adv_api/tiling/normalization/layernorm_grad_beta_tiling_impl.cpp:27-177 (read, not copied). The kernel
// runs LayerNormGradBeta on the emulator (lib/normalization/layernormgradbeta.h). Bad arguments leave the outputs
// untouched with a message on stderr, as CANN's ASCENDC_HOST_ASSERT returns.
#pragma once
#include <cstdint>
#include <cstdio>

#include "layernorm_tiling.h"  // AscendC::TensorShape
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LayerNormGradBetaTiling)
TILING_DATA_FIELD_DEF(uint32_t, stackBufferSize);
TILING_DATA_FIELD_DEF(uint32_t, bLength);
TILING_DATA_FIELD_DEF(uint32_t, sLength);
TILING_DATA_FIELD_DEF(uint32_t, hLength);
TILING_DATA_FIELD_DEF(uint32_t, originalHLength);
TILING_DATA_FIELD_DEF(uint32_t, bshLength);
TILING_DATA_FIELD_DEF(uint32_t, bsLength);
TILING_DATA_FIELD_DEF(uint32_t, oneCalSize);
TILING_DATA_FIELD_DEF(uint32_t, numberOfTmpBuf);
TILING_DATA_FIELD_DEF(uint32_t, loopRound);
TILING_DATA_FIELD_DEF(uint32_t, inputTailSize);
TILING_DATA_FIELD_DEF(uint32_t, inputTailPos);
TILING_DATA_FIELD_DEF(uint32_t, bsTailSize);
TILING_DATA_FIELD_DEF(uint32_t, bshCurLength);
TILING_DATA_FIELD_DEF(uint32_t, bsCurLength);
TILING_DATA_FIELD_DEF(uint32_t, gammaTempTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, betaTempTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, inputDyTmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, resForGammaTmpTensorPos);
TILING_DATA_FIELD_DEF(uint32_t, reserved);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace layernorm_grad_beta_detail {
inline bool check(const char* fn, const ge::Shape& s, uint32_t typeSize) {
  const char* why = typeSize != 2 && typeSize != 4 ? "typeSize must be 2 (half) or 4 (float)"
                    : s.GetShapeSize() <= 0        ? "the shape size must be greater than 0"
                    : s.GetDimNum() != 4 ? "srcShape must be 4-D [B, S, storageHLength, originHLength]"
                                         : nullptr;
  if (why) std::fprintf(stderr, "[LayerNormGradBeta][%s] %s\n", fn, why);
  return why == nullptr;
}
}  // namespace layernorm_grad_beta_detail

// Bytes: float copies of the inputs (4 buffers for half, 2 for float) of all rows (max) or one row (min)
inline void GetLayerNormGradBetaMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                              const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  if (!layernorm_grad_beta_detail::check("GetLayerNormGradBetaMaxMinTmpSize", srcShape, typeSize)) return;
  const uint32_t h = uint32_t(srcShape.GetDim(2)), bs = uint32_t(srcShape.GetDim(0) * srcShape.GetDim(1));
  const uint32_t n = typeSize == 2 ? 4 : 2;
  maxValue = n * bs * h * 4;
  minValue = n * h * 4;
}

inline void GetLayerNormGradBetaNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                             const uint32_t typeSize, const bool isReuseSource,
                                             optiling::LayerNormGradBetaTiling& tiling) {
  (void)isReuseSource;
  const char* fn = "GetLayerNormGradBetaNDTilingInfo";
  if (!layernorm_grad_beta_detail::check(fn, srcShape, typeSize)) return;
  const uint32_t b = uint32_t(srcShape.GetDim(0)), s = uint32_t(srcShape.GetDim(1)), h = uint32_t(srcShape.GetDim(2));
  const uint32_t oriH = uint32_t(srcShape.GetDim(3)), bsh = b * s * h, floats = stackBufferSize / 4;
  if (h == 0 || floats < 2 * h) {
    std::fprintf(stderr, "[LayerNormGradBeta][%s] stackBufferSize is not enough.\n", fn);
    return;
  }
  uint32_t one = floats, nbuf = 1;
  if (typeSize == 2) nbuf = 2, one = (one - 2 * h) / 2;  // gamma / beta float sums of H first
  one = one / h * h;
  if (one == 0) {
    std::fprintf(stderr, "[LayerNormGradBeta][%s] stackBufferSize is not enough.\n", fn);
    return;
  }
  if (one >= bsh) one = bsh;
  const uint32_t tail = bsh % one;
  tiling.set_stackBufferSize(floats);
  tiling.set_bLength(b);
  tiling.set_sLength(s);
  tiling.set_hLength(h);
  tiling.set_originalHLength(oriH);
  tiling.set_bshLength(bsh);
  tiling.set_bsLength(b * s);
  tiling.set_oneCalSize(one);
  tiling.set_numberOfTmpBuf(nbuf);
  tiling.set_loopRound(bsh / one);
  tiling.set_inputTailSize(tail);
  tiling.set_inputTailPos(bsh - tail);
  tiling.set_bsTailSize(tail / h);
  tiling.set_bshCurLength(one);
  tiling.set_bsCurLength(one / h);
  const bool hf = typeSize == 2;
  tiling.set_gammaTempTensorPos(0);
  tiling.set_betaTempTensorPos(hf ? h : 0);
  tiling.set_inputDyTmpTensorPos(hf ? 2 * h : 0);
  tiling.set_resForGammaTmpTensorPos(hf ? 2 * h + one : 0);
}
// the overload filling the kernel-side struct (layernorm_grad_beta_tiling_impl.cpp:179-186)
inline void GetLayerNormGradBetaNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                             const uint32_t typeSize, const bool isReuseSource,
                                             AscendC::tiling::LayerNormGradBetaTiling& tiling) {
  optiling::LayerNormGradBetaTiling t;
  GetLayerNormGradBetaNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, t);
  t.SaveToBuffer(&tiling, sizeof(tiling));
}
}  // namespace AscendC
