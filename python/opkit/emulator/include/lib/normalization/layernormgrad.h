// CANN's lib/normalization/layernormgrad.h (asc-devkit 82b89a15 include/adv_api/normalization/layernormgrad.h,
// LayerNormGradShapeInfo layernormgrad_utils.h; page docs/zh/api/SIMD-API/高阶API/归一化操作/LayerNormGrad.md): the
// gradient of LayerNorm over H of a [B, S, H] ND tensor, half and float, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false>
//   LayerNormGrad(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean, inputGamma
//                 [, sharedTmpBuffer], T epsilon, LayerNormGradTiling& tiling, const LayerNormGradShapeInfo& = {})
// Per row, in float as the A2 implementation computes it (impl/adv_api/detail/normalization/layernormgrad/
// layernormgrad_common_impl.h:248-480; half: every input cast to float, the two outputs cast back once), each
// step rounded to float: x1 = dy x gamma, x2 = x - mean, r15 = 1 / sqrt((v + eps)^2 x (v + eps)),
// pdVar = sum(((x2 x r15) x x1) x -0.5), r05 = 1 / sqrt(v + eps), resForGamma = x2 x r05, x3 = x1 x r05,
// pdMean = sum(x3 x -1) + pdVar x (sum(x2 x -2) x 1/H), pdX = ((pdVar x 2/H) x x2 + pdMean x 1/H) + x3, with
// 1/H and 2/H the tiling's lastDimValueBack / lastDimValueBackMulTwo (1 / originalHLength). The sums run over all
// hLength columns in CANN's order: WholeReduceSum trees of 64 lanes, level after level (ReduceSumImpl :181-238).
// Rows run in the tiling's rounds (loopNum x nohCalSize rows, then nohTailSize). isReuseSource (float): inputDy
// ends holding pdVar x 2/H x x2 + pdMean x 1/H and inputX holding x - mean, the work CANN does in them.
// Checked: the tiling filled (oneCalSize > 0; else GetLayerNormGradNDTilingInfo was not run), hLength x sizeof(T) a
// multiple of 32, 0 < originalHLength <= hLength, the tensors holding B x S x H / B x S / H, ND only (api-argument);
// a sharedTmpBuffer below GetLayerNormGradMaxMinTmpSize's minimum (min(B x S x H, H x H) x (9 half, 6 float, 4
// float with isReuseSource) x sizeof(T) bytes, impl/adv_api/tiling/normalization/layernorm_grad_tiling_impl.cpp:
// 103-145), below the tiling's stackBufferSize (:520), or smaller than the float buffers the tiling lays out in it
// (its nohCalSize is rounded up to a block of rows, so a tiling made for the minimum of a shape with fewer rows
// than a block reaches past the buffer: the device would write there) is tensor-bounds. Poison: a row is poison
// in both outputs when one of its inputs' lanes (or gamma's) is.
#pragma once
#include "opkit_emu/host_math.h"
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_norm.h"

namespace AscendC {
struct LayerNormGradShapeInfo {
  DataFormat dataFormat = DataFormat::ND;
};
}  // namespace AscendC

namespace opkit_emu {
// GetLayerNormGradMaxMinTmpSize's minimum, bytes (layernorm_grad_tiling_impl.cpp:128-144)
inline uint32_t lngrad_min_tmp(uint32_t bsh, uint32_t h, uint32_t size, bool reuse) {
  const uint32_t base = std::min(bsh, h * h);
  return base * (size == 2 ? 9 : reuse ? 4 : 6) * size;
}

template <class T, bool reuse, class Tiling>
void adv_layernorm_grad(const AscendC::LocalTensor<T>& pdx, const AscendC::LocalTensor<T>& rfg,
                        const AscendC::LocalTensor<T>& dy, const AscendC::LocalTensor<T>& x,
                        const AscendC::LocalTensor<T>& var, const AscendC::LocalTensor<T>& mean,
                        const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<uint8_t>* tmp, T eps,
                        const Tiling& t, const AscendC::LayerNormGradShapeInfo& si, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: LayerNormGrad supports half and float (LayerNormGrad.md, A2)");
  static_assert(!(reuse && std::is_same<T, half>::value),
                "opkit emulator: LayerNormGrad's isReuseSource is for float inputs only (LayerNormGrad.md)");
  const char* api = "LayerNormGrad";
  if (si.dataFormat != AscendC::DataFormat::ND)
    fail("api-argument", api, loc, "shapeInfo.dataFormat is not ND: LayerNormGrad supports ND only (:527-533)");
  if (t.oneCalSize == 0 || t.nohCalSize == 0)
    fail("api-argument", api, loc,
         "tiling.oneCalSize is 0: the LayerNormGradTiling was not filled (GetLayerNormGradNDTilingInfo)");
  const uint32_t H = t.hLength, oriH = t.originalHLength;
  if (H == 0 || H * sizeof(T) % kBlk || oriH == 0 || oriH > H)
    fail("api-argument", api, loc,
         strf("tiling hLength %u (x sizeof(T) must be a multiple of 32), originalHLength %u (must be in (0, hLength])",
              H, oriH));
  const uint64_t rows = uint64_t(t.bLength) * t.sLength, total = rows * H;
  if (rows == 0 || dy.GetSize() < total || x.GetSize() < total || pdx.GetSize() < total || rfg.GetSize() < total ||
      var.GetSize() < rows || mean.GetSize() < rows || gamma.GetSize() < H)
    fail("api-argument", api, loc,
         strf("B x S x H = %u x %u x %u, but outputPdX holds %u, resForGamma %u, inputDy %u, inputX %u (need B x S x "
              "H), inputVariance %u, inputMean %u (need B x S) and inputGamma %u elements (need H)",
              t.bLength, t.sLength, H, pdx.GetSize(), rfg.GetSize(), dy.GetSize(), x.GetSize(), var.GetSize(),
              mean.GetSize(), gamma.GetSize()));
  // rows the rounds cover: loopNum rounds of nohCalSize, then the tail
  const uint64_t covered = std::min<uint64_t>(rows, uint64_t(t.loopNum) * t.nohCalSize + t.nohTailSize);
  if (tmp) {
    const uint32_t host_min = lngrad_min_tmp(uint32_t(total), H, sizeof(T), reuse);
    const uint32_t maxcal = t.loopNum ? t.oneCalSize : t.tailSize;
    uint32_t top = std::max({t.tmpTensorBSHPos, t.pdVarTensorPos, t.pdMeanTensorPos, t.x3TensorPos});
    if (!reuse) top = std::max({top, t.x1TensorPos, t.x2TensorPos});
    if (sizeof(T) == 2) top = std::max({top, t.tmpTensorPos, t.tmpTensor1Pos, t.tmpTensor2Pos});
    const uint64_t layout = (uint64_t(top) + maxcal) * 4;
    if (tmp->GetSize() < host_min)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetLayerNormGradMaxMinTmpSize gives as the minimum "
                "for [B x S x H = %llu, H = %u]",
                tmp->GetSize(), host_min, static_cast<unsigned long long>(total), H));
    if (tmp->GetSize() < t.stackBufferSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the tiling's stackBufferSize %u (:520)", tmp->GetSize(),
                t.stackBufferSize));
    if (tmp->GetSize() < layout)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, but the tiling's float buffers reach %llu bytes (the last at %u "
                "floats + %u): GetLayerNormGradNDTilingInfo rounded nohCalSize up to %u rows, a 32-byte block of "
                "rows, more than the buffer holds; the device would write past it. Give a buffer of whole blocks "
                "of rows (buffers x rows-per-block x H x 4 bytes)",
                tmp->GetSize(), static_cast<unsigned long long>(layout), top, maxcal, t.nohCalSize));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(pdx, total, "outputPdX").dst(rfg, total, "resForGamma");
  c.src(dy, total, "inputDy").src(x, total, "inputX").src(var, rows, "inputVariance").src(mean, rows, "inputMean");
  c.src(gamma, H, "inputGamma");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bool g = false;
    for (uint32_t h = 0; h < H && !g; ++h) g = ApiCall::lane_poisoned(c.operand(6), h);
    bad.assign(rows, g);
    for (uint64_t r = 0; r < rows; ++r) {
      bad[r] = bad[r] || ApiCall::lane_poisoned(c.operand(4), r) || ApiCall::lane_poisoned(c.operand(5), r);
      for (uint32_t h = 0; h < H && !bad[r]; ++h)
        bad[r] = ApiCall::lane_poisoned(c.operand(2), r * H + h) || ApiCall::lane_poisoned(c.operand(3), r * H + h);
    }
  }
  ctx().stats.vector_elems += total;
  float back, back2;  // the tiling carries them as float bits
  std::memcpy(&back, &t.lastDimValueBack, 4);
  std::memcpy(&back2, &t.lastDimValueBackMulTwo, 4);
  std::vector<float> g(H), x1(H), x2(H), x3(H), w(H);
  for (uint32_t h = 0; h < H; ++h) g[h] = to_f(gamma.data()[h]);
  const float e = to_f(eps);
  for (uint64_t r = 0; r < covered; ++r) {
    const T *dr = dy.data() + r * H, *xr = x.data() + r * H;
    const float m = to_f(mean.data()[r]), ve = to_f(var.data()[r]) + e;
    for (uint32_t h = 0; h < H; ++h) x1[h] = to_f(dr[h]) * g[h], x2[h] = to_f(xr[h]) - m;
    const float r15 = 1.0f / hm::sqrt((ve * ve) * ve), r05 = 1.0f / hm::sqrt(ve);
    for (uint32_t h = 0; h < H; ++h) w[h] = (x1[h] * (x2[h] * r15)) * -0.5f;
    const float pdvar = lng_row_sum(w.data(), H);
    for (uint32_t h = 0; h < H; ++h) x3[h] = x1[h] * r05, w[h] = x3[h] * -1.0f;
    float pdmean = lng_row_sum(w.data(), H);
    for (uint32_t h = 0; h < H; ++h) w[h] = x2[h] * -2.0f;
    pdmean = pdmean + pdvar * (lng_row_sum(w.data(), H) * back);
    const float pv2 = pdvar * back2, pm1 = pdmean * back;
    T *pr = pdx.data() + r * H, *gr = rfg.data() + r * H;
    for (uint32_t h = 0; h < H; ++h) {
      const float y1 = pv2 * x2[h] + pm1;  // two roundings: Mul, then Add
      gr[h] = from_f<T>(x2[h] * r05);
      pr[h] = from_f<T>(y1 + x3[h]);
      if (reuse) {  // float: x1Tensor is inputDy, x2Tensor is inputX (GetTmpTensor :405-414)
        dy.data()[r * H + h] = from_f<T>(y1);
        x.data()[r * H + h] = from_f<T>(x2[h]);
      }
    }
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t r = 0; r < covered; ++r) {
    const bool ok = bad.empty() || !bad[r];
    const uint32_t off = static_cast<uint32_t>(r * H * sizeof(T)), len = static_cast<uint32_t>(H * sizeof(T));
    shadow_fill(pdx.m_.ub_off() + off, len, ok);
    shadow_fill(rfg.m_.ub_off() + off, len, ok);
    if (reuse) shadow_fill(dy.m_.ub_off() + off, len, ok), shadow_fill(x.m_.ub_off() + off, len, ok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, class LayerNormGradTilingT>
void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                   const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                   const LocalTensor<T>& inputGamma, LocalTensor<uint8_t>& sharedTmpBuffer, T epsilon,
                   LayerNormGradTilingT& tiling, const LayerNormGradShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm_grad<T, isReuseSource>(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean,
                                                    inputGamma, &sharedTmpBuffer, epsilon, tiling, shapeInfo, loc);
}
template <typename T, bool isReuseSource = false, class LayerNormGradTilingT>
void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                   const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                   const LocalTensor<T>& inputGamma, T epsilon, LayerNormGradTilingT& tiling,
                   const LayerNormGradShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm_grad<T, isReuseSource>(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean,
                                                    inputGamma, nullptr, epsilon, tiling, shapeInfo, loc);
}
}  // namespace AscendC
