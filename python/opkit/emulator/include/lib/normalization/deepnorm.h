// CANN's lib/normalization/deepnorm.h (asc-devkit 82b89a15 include/adv_api/normalization/deepnorm.h; page
// docs/zh/api/SIMD-API/高阶API/归一化操作/DeepNorm.md): DeepNorm of [B, S, H] ND tensors over H, half and float, with
// and without sharedTmpBuffer:
//   template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
//   DeepNorm(dst, mean, rstd, src, gx, beta, gamma[, sharedTmpBuffer], const T alpha, const T epsilon,
//            DeepNormTiling& tiling)
// Computed as the A2 implementation does (impl/adv_api/detail/normalization/deepnorm/deepnorm_common_impl.h:134-
// 572), in float (half: inputs, gamma and beta cast to float, the outputs cast back once), each step rounded to
// float: x1 = gx + alpha x x, mean = sum(x1 x lastDimValueBack), var = sum((x1 - mean)^2 x lastDimValueBack), both
// over the first originalHLength columns, dst = (x1 - mean) x (1 / sqrt(var + eps)) x gamma + beta over all hLength
// columns. The sums: RepeatReduceSum levels (DeepNormReduceSumImpl :212-244), or with isBasicBlock the 64-float
// repeats folded lane-wise then one tree (:180-208): read from the A2 code, not checked on a device.
// Note: the page calls the third output rstdLocal ("倒数标准差", the reciprocal standard deviation), but the A2
// code writes the variance there (GetDeepNormOutputVariance's reduction lands in outputVariance = rstdLocal,
// :349-383, :503-505; the reciprocal stays in a work buffer) -- the emulator follows the code.
// Rounds follow the tiling, and the tail round leaves its lengths in the caller's tiling (:527-529), as LayerNorm.
// isReuseSrc (float): srcLocal ends holding (x1 - mean) x rstd x gamma.
// Checked: the tiling filled (oneTmpSize > 0, :45), hLength x sizeof(T) a multiple of 32 and at most 2040,
// 0 < originalHLength <= hLength, isBasicBlock only with hLength and originalHLength multiples of 64 and B x S a
// multiple of 8 (:49-58), the tensors holding B x S x H / B x S / H (api-argument); a sharedTmpBuffer below
// GetDeepNormMaxMinTmpSize's minimum (3 x align32(H x 4) + 2 x align32(B x S x 4) bytes, 2 x ... with isReuseSrc
// for float: impl/adv_api/tiling/normalization/deepnorm_tiling_impl.cpp:60-79) or below the tiling's tmpBufSize
// floats (:63-70) is tensor-bounds. Poison: a row is poison in every output when one of its src / gx lanes, or a
// gamma / beta lane, is.
#pragma once
#include "opkit_emu/host_math.h"
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_norm.h"

namespace opkit_emu {
// GetDeepNormMaxMinTmpSize's minimum (deepnorm_tiling_impl.cpp:60-79)
inline uint32_t deepnorm_min_tmp(uint32_t bs, uint32_t h, uint32_t size, bool reuse) {
  const uint32_t mv = (bs * 4 + 31) / 32 * 32, hd = (h * 4 + 31) / 32 * 32;
  return (reuse && size == 4 ? 2 : 3) * hd + 2 * mv;
}

template <class T, bool reuse, bool basic, class Tiling>
void adv_deepnorm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean,
                  const AscendC::LocalTensor<T>& var, const AscendC::LocalTensor<T>& x,
                  const AscendC::LocalTensor<T>& gx, const AscendC::LocalTensor<T>& beta,
                  const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<uint8_t>* tmp, T alpha, T eps,
                  Tiling& t, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: DeepNorm supports half and float (DeepNorm.md, A2)");
  const char* api = "DeepNorm";
  constexpr bool rs = reuse && sizeof(T) == 4;  // half never reuses its source (GetDeepNormTensorInfo :82-100)
  if (t.oneTmpSize == 0)
    fail("api-argument", api, loc,
         "tiling.oneTmpSize is 0: the DeepNormTiling was not filled (GetDeepNormTilingInfo), or its stackBufferSize "
         "was too small for one row");
  const uint32_t H = t.hLength, oriH = t.originalHLength;
  if (H == 0 || H * sizeof(T) % kBlk || H > 2040 || oriH == 0 || oriH > H)
    fail("api-argument", api, loc,
         strf("tiling hLength %u (x sizeof(T) must be a multiple of 32, at most 2040), originalHLength %u (must be in "
              "(0, hLength])", H, oriH));
  const uint64_t rows = uint64_t(t.bLength) * t.sLength, total = rows * H;
  if (basic && (H % 64 || oriH % 64 || rows % 8))
    fail("api-argument", api, loc,
         strf("isBasicBlock needs hLength (%u) and originalHLength (%u) multiples of 64 and B x S (%llu) a multiple "
              "of 8 (DeepNorm.md)", H, oriH, static_cast<unsigned long long>(rows)));
  if (rows == 0 || x.GetSize() < total || gx.GetSize() < total || out.GetSize() < total || mean.GetSize() < rows ||
      var.GetSize() < rows || gamma.GetSize() < H || beta.GetSize() < H)
    fail("api-argument", api, loc,
         strf("B x S x H = %u x %u x %u, but srcLocal holds %u, gxLocal %u, dstLocal %u (need B x S x H), meanLocal "
              "%u, rstdLocal %u (need B x S), gammaLocal %u and betaLocal %u elements (need H)",
              t.bLength, t.sLength, H, x.GetSize(), gx.GetSize(), out.GetSize(), mean.GetSize(), var.GetSize(),
              gamma.GetSize(), beta.GetSize()));
  if (tmp) {
    const uint32_t host_min = deepnorm_min_tmp(uint32_t(rows), H, sizeof(T), rs);
    if (tmp->GetSize() < host_min)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetDeepNormMaxMinTmpSize gives as the minimum for "
                "[B x S = %llu, H = %u]", tmp->GetSize(), host_min, static_cast<unsigned long long>(rows), H));
    if (tmp->GetSize() / 4 < t.tmpBufSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the tiling's tmpBufSize %u floats (the stackBufferSize it was "
                "made for)", tmp->GetSize(), t.tmpBufSize));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(out, total, "dstLocal").dst(mean, rows, "meanLocal").dst(var, rows, "rstdLocal");
  c.src(x, total, "srcLocal").src(gx, total, "gxLocal").src(beta, H, "betaLocal").src(gamma, H, "gammaLocal");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bool gb = false;
    for (uint32_t h = 0; h < H && !gb; ++h)
      gb = ApiCall::lane_poisoned(c.operand(5), h) || ApiCall::lane_poisoned(c.operand(6), h);
    bad.assign(rows, gb ? 2 : 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint32_t h = 0; h < oriH && !(bad[r] & 1); ++h)
        if (ApiCall::lane_poisoned(c.operand(3), r * H + h) || ApiCall::lane_poisoned(c.operand(4), r * H + h))
          bad[r] |= 1;
  }
  ctx().stats.vector_elems += total;
  std::vector<float> g(H), b(H), x1(H), sc(H), d(H);
  for (uint32_t h = 0; h < H; ++h) g[h] = to_f(gamma.data()[h]), b[h] = to_f(beta.data()[h]);
  const float back = t.lastDimValueBack, e = to_f(eps), al = to_f(alpha);
  auto sum = [&](const float* v) { return basic ? ln_row_sum(v, oriH) : lng_row_sum(v, oriH); };
  std::vector<uint8_t> done(rows, 0);
  auto round = [&](uint64_t r0, uint64_t n) {
    for (uint64_t r = r0; r < r0 + n && r < rows; ++r) {
      const T *xr = x.data() + r * H, *gr = gx.data() + r * H;
      for (uint32_t h = 0; h < H; ++h) x1[h] = to_f(gr[h]) + to_f(xr[h]) * al, sc[h] = x1[h] * back;
      const float m = sum(sc.data());
      for (uint32_t h = 0; h < H; ++h) d[h] = x1[h] - m, sc[h] = (d[h] * d[h]) * back;
      const float v = sum(sc.data());
      const float rstd = 1.0f / hm::sqrt(v + e);
      T* yr = out.data() + r * H;
      T* xw = rs ? x.data() + r * H : nullptr;
      for (uint32_t h = 0; h < H; ++h) {
        const float yg = (d[h] * rstd) * g[h];
        if (xw) xw[h] = from_f<T>(yg);  // reuse: the work CANN leaves in srcLocal (float only)
        yr[h] = from_f<T>(yg + b[h]);
      }
      mean.data()[r] = from_f<T>(m);
      var.data()[r] = from_f<T>(v);  // the variance: see the note above
      done[r] = 1;
    }
  };
  for (uint32_t i = 0; i < t.loopRound; ++i) round(uint64_t(i) * t.meanVarRoundSize, t.bsCurLength);
  if (t.inputTailSize > 0) {
    t.bshCurLength = t.inputTailSize;  // as the device does: the caller's tiling keeps the tail's lengths
    t.bsCurLength = t.meanVarTailSize;
    round(t.meanVarTailPos, t.meanVarTailSize);
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t r = 0; r < rows; ++r) {
    if (!done[r]) continue;
    const bool rowok = bad.empty() || !bad[r], xok = bad.empty() || !(bad[r] & 1);
    const uint32_t off = static_cast<uint32_t>(r * H * sizeof(T)), len = static_cast<uint32_t>(H * sizeof(T));
    shadow_fill(out.m_.ub_off() + off, len, rowok);
    shadow_fill(mean.m_.ub_off() + static_cast<uint32_t>(r * sizeof(T)), sizeof(T), xok);
    shadow_fill(var.m_.ub_off() + static_cast<uint32_t>(r * sizeof(T)), sizeof(T), xok);
    if (rs) shadow_fill(x.m_.ub_off() + off, len, rowok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSrc = false, bool isBasicBlock = false, class DeepNormTilingT>
void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal, const LocalTensor<T>& rstdLocal,
              const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
              const LocalTensor<T>& gammaLocal, const LocalTensor<uint8_t>& sharedTmpBuffer, const T alpha,
              const T epsilon, DeepNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_deepnorm<T, isReuseSrc, isBasicBlock>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal,
                                                         gammaLocal, &sharedTmpBuffer, alpha, epsilon, tiling, loc);
}
template <typename T, bool isReuseSrc = false, bool isBasicBlock = false, class DeepNormTilingT>
void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal, const LocalTensor<T>& rstdLocal,
              const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
              const LocalTensor<T>& gammaLocal, const T alpha, const T epsilon, DeepNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_deepnorm<T, isReuseSrc, isBasicBlock>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal,
                                                         gammaLocal, nullptr, alpha, epsilon, tiling, loc);
}
}  // namespace AscendC
