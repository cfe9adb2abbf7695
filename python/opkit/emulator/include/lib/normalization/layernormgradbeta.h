// CANN's lib/normalization/layernormgradbeta.h (asc-devkit 82b89a15 include/adv_api/normalization/
// layernormgradbeta.h; page docs/zh/api/SIMD-API/高阶API/归一化操作/LayerNormGradBeta.md): the gamma and beta
// gradients of LayerNorm, half and float, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false>
//   LayerNormGradBeta(outputPdGamma, outputPdBeta, resForGamma, inputDy[, sharedTmpBuffer], tiling)
// pdGamma[h] = sum over the B x S rows of dy x resForGamma, pdBeta[h] = sum over the rows of dy, for the first
// originalHLength columns (the others are not written), as the A2 implementation computes them
// (impl/adv_api/detail/normalization/layernormgrad/layernormgradbeta_common_impl.h:52-150): in float (half: cast
// in, the float sums cast back once), the rows added one after another in order onto the first
// (ReduceSumFirstN), round after round. isReuseSource (float): resForGamma ends holding dy x resForGamma
// (:179-191). Checked: the tiling filled (oneCalSize > 0, :209; else GetLayerNormGradBetaNDTilingInfo was not run),
// hLength x sizeof(T) a multiple of 32, 0 < originalHLength <= hLength, the tensors holding B x S x H / H
// (api-argument); a sharedTmpBuffer below GetLayerNormGradBetaMaxMinTmpSize's minimum (H x 4 bytes x 4 for half,
// x 2 for float, impl/adv_api/tiling/normalization/layernorm_grad_beta_tiling_impl.cpp:63-76) or below the
// tiling's stackBufferSize floats (:193) is tensor-bounds. Poison: a column is poison in both outputs when one of
// its summed lanes is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
inline uint32_t lngradbeta_min_tmp(uint32_t h, uint32_t size) { return (size == 2 ? 4 : 2) * h * 4; }

template <class T, bool reuse, class Tiling>
void adv_layernorm_grad_beta(const AscendC::LocalTensor<T>& pdg, const AscendC::LocalTensor<T>& pdb,
                             const AscendC::LocalTensor<T>& rfg, const AscendC::LocalTensor<T>& dy,
                             const AscendC::LocalTensor<uint8_t>* tmp, const Tiling& t, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: LayerNormGradBeta supports half and float (LayerNormGradBeta.md, A2)");
  const char* api = "LayerNormGradBeta";
  if (t.oneCalSize == 0 || t.bsCurLength == 0)
    fail("api-argument", api, loc,
         "tiling.oneCalSize is 0: the LayerNormGradBetaTiling was not filled (GetLayerNormGradBetaNDTilingInfo)");
  const uint32_t H = t.hLength, oriH = t.originalHLength;
  if (H == 0 || H * sizeof(T) % kBlk || oriH == 0 || oriH > H)
    fail("api-argument", api, loc,
         strf("tiling hLength %u (x sizeof(T) must be a multiple of 32), originalHLength %u (must be in (0, hLength])",
              H, oriH));
  const uint64_t rows = uint64_t(t.bLength) * t.sLength, total = rows * H;
  if (rows == 0 || rfg.GetSize() < total || dy.GetSize() < total || pdg.GetSize() < H || pdb.GetSize() < H)
    fail("api-argument", api, loc,
         strf("B x S x H = %u x %u x %u, but resForGamma holds %u, inputDy %u (need B x S x H), outputPdGamma %u and "
              "outputPdBeta %u elements (need H)",
              t.bLength, t.sLength, H, rfg.GetSize(), dy.GetSize(), pdg.GetSize(), pdb.GetSize()));
  if (tmp) {
    const uint32_t host_min = lngradbeta_min_tmp(H, sizeof(T));
    if (tmp->GetSize() < host_min || tmp->GetSize() / 4 < t.stackBufferSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetLayerNormGradBetaMaxMinTmpSize gives as the "
                "minimum for H %u, or the tiling's stackBufferSize %u floats",
                tmp->GetSize(), host_min, H, t.stackBufferSize));
  }
  // rows the rounds cover: the first round, loopRound - 1 more, then the tail
  const uint64_t covered =
      std::min<uint64_t>(rows, uint64_t(std::max(t.loopRound, 1u)) * t.bsCurLength + (t.inputTailSize ? t.bsTailSize : 0));
  ApiCall c(Pipe::V, api, loc);
  c.dst(pdg, oriH, "outputPdGamma").dst(pdb, oriH, "outputPdBeta").src(rfg, total, "resForGamma").src(dy, total, "inputDy");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> badg, badb;
  if (c.commit(Flow::Manual)) {
    badg.assign(oriH, 0);
    badb.assign(oriH, 0);
    for (uint64_t r = 0; r < covered; ++r)
      for (uint32_t h = 0; h < oriH; ++h) {
        const bool d = ApiCall::lane_poisoned(c.operand(3), r * H + h);
        badb[h] |= d;
        badg[h] |= d || ApiCall::lane_poisoned(c.operand(2), r * H + h);
      }
  }
  ctx().stats.vector_elems += total;
  std::vector<float> sg(oriH), sb(oriH);
  for (uint64_t r = 0; r < covered; ++r) {
    const T *dr = dy.data() + r * H, *gr = rfg.data() + r * H;
    for (uint32_t h = 0; h < oriH; ++h) {
      const float p = to_f(dr[h]) * to_f(gr[h]), d = to_f(dr[h]);
      sg[h] = r ? p + sg[h] : p + 0.0f;
      sb[h] = r ? d + sb[h] : d + 0.0f;
    }
    if (reuse)  // float: resForGammaTmpTensor is resForGamma itself
      for (uint32_t h = 0; h < H; ++h) rfg.data()[r * H + h] = from_f<T>(to_f(dr[h]) * to_f(gr[h]));
  }
  for (uint32_t h = 0; h < oriH; ++h) pdg.data()[h] = from_f<T>(sg[h]), pdb.data()[h] = from_f<T>(sb[h]);
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t h = 0; h < oriH; ++h) {
    shadow_fill(pdg.m_.ub_off() + h * sizeof(T), sizeof(T), badg.empty() || !badg[h]);
    shadow_fill(pdb.m_.ub_off() + h * sizeof(T), sizeof(T), badb.empty() || !badb[h]);
  }
  if (reuse) shadow_fill(rfg.m_.ub_off(), static_cast<uint32_t>(covered * H * sizeof(T)), true);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, class LayerNormGradBetaTilingT>
void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                       const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                       const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormGradBetaTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm_grad_beta<T, isReuseSource && sizeof(T) == 4>(outputPdGamma, outputPdBeta, resForGamma,
                                                                           inputDy, &sharedTmpBuffer, tiling, loc);
}
template <typename T, bool isReuseSource = false, class LayerNormGradBetaTilingT>
void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                       const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                       LayerNormGradBetaTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm_grad_beta<T, isReuseSource && sizeof(T) == 4>(outputPdGamma, outputPdBeta, resForGamma,
                                                                           inputDy, nullptr, tiling, loc);
}
}  // namespace AscendC
