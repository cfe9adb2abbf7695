// CANN's lib/normalization/layernorm.h (asc-devkit 82b89a15 include/adv_api/normalization/layernorm.h:36-60; the
// config / para structs include/adv_api/normalization/layernorm_utils.h:27-50; page
// docs/zh/api/SIMD-API/高阶API/归一化操作/LayerNorm.md): LayerNorm of a [B, S, H] ND tensor over H, the A2 form
// that outputs mean and variance, half and float, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false>
//   LayerNorm(output, outputMean, outputVariance, inputX, gamma, beta[, sharedTmpBuffer], const T epsilon,
//             LayerNormTiling& tiling)
// Computed as the A2 implementation does (impl/adv_api/detail/normalization/layernorm/layernorm_common_impl.h:89-176,
// layernorm_common_basic_impl.h:37-118 and :348-451), in float (half: inputs, gamma and beta cast to float, the
// outputs cast back once): mean = sum_h (x_h x lastDimValueBack), var = sum_h ((x_h - mean)^2 x lastDimValueBack),
// both over all hLength columns (padding the page asks to be 0 still adds (0 - mean)^2 / originalHLength to var),
// y = (x - mean) x (1 / sqrt(var + eps)) x gamma + beta, each step rounded to float. The row sum is CANN's: the
// 64-float repeats of the row added lane by lane in order onto the first, the tail onto its first lanes, then one
// WholeReduceSum tree over the 64 lanes (:44-115): bitwise the device's order. The rounds follow the tiling
// (loopRound rounds of bsCurLength rows at inputRoundSize steps, then the tail) and, as on the device, the tail
// round writes its lengths into the caller's tiling (bshCurLength / bsCurLength, :161-163): a second call with the
// same tiling object then computes only that many rows per round. isReuseSource (float only): inputX ends holding
// (x - mean) x rstd x gamma, the work CANN does in it.
// Checked: the tiling filled (oneTmpSize > 0, layernorm_common_impl.h:185; else GetLayerNormNDTilingInfo was not
// run), hLength x sizeof(T) a multiple of 32, 0 < originalHLength <= hLength, isReuseSource only for float, the
// tensors holding B x S x H / B x S / H (api-argument; page "约束说明"); a sharedTmpBuffer below
// GetLayerNormMaxMinTmpSize's minimum (3 x align32(H x 4) + 2 x align32(B x S x 4) bytes, 2 x align32(H x 4) + ...
// with isReuseSource for float: impl/adv_api/tiling/normalization/layernorm_tiling_impl.cpp:76-95) or below the
// tiling's tmpBufSize floats (layernorm_common_basic_impl.h:188) is tensor-bounds. Poison: a row is poison in
// every output when one of its x lanes, or a gamma / beta lane, is.
// The LayerNormPara / LayerNormSeparateTiling (rstd) form and WelfordUpdate, which CANN declares here too, are below.
// LayerNormGrad / LayerNormGradBeta have their own headers.
#pragma once
#include "opkit_emu/host_math.h"
#include <algorithm>
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_norm.h"

namespace AscendC {
struct LayerNormConfig {
  bool isNoBeta = false;
  bool isNoGamma = false;
  bool isOnlyOutput = false;
  bool isOutputRstd = true;
};
struct WelfordUpdateConfig {
  constexpr WelfordUpdateConfig(const bool isInplaceIn) : isInplace(isInplaceIn) {}
  bool isInplace = false;
};
constexpr WelfordUpdateConfig WFUPDATE_DEFAULT_CFG = {false};
struct LayerNormPara {
  uint32_t aLength;
  uint32_t rLength;
  uint32_t rLengthWithPadding;
};
struct WelfordUpdateParam {
  uint32_t rnLength;
  uint32_t abLength;
  uint32_t abComputeLength;
  float nRec;
};
constexpr LayerNormConfig LNCFG_NORM = {false, false, false, true};
}  // namespace AscendC

namespace opkit_emu {
template <class> inline constexpr bool ln_false = false;

// GetLayerNormMaxMinTmpSize's minimum (layernorm_tiling_impl.cpp:76-95)
inline uint32_t layernorm_min_tmp(uint32_t bs, uint32_t h, uint32_t size, bool reuse) {
  const uint32_t mv = (bs * 4 + 31) / 32 * 32, hd = (h * 4 + 31) / 32 * 32;
  return (reuse && size == 4 ? 2 : 3) * hd + 2 * mv;
}

template <class T, bool reuse, class Tiling>
void adv_layernorm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean,
                   const AscendC::LocalTensor<T>& var, const AscendC::LocalTensor<T>& x,
                   const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<T>& beta,
                   const AscendC::LocalTensor<uint8_t>* tmp, T eps, Tiling& t, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: LayerNorm supports half and float (LayerNorm.md, A2)");
  static_assert(!(reuse && std::is_same<T, half>::value),
                "opkit emulator: LayerNorm's isReuseSource is for float inputs only (LayerNorm.md)");
  const char* api = "LayerNorm";
  if (t.oneTmpSize == 0)
    fail("api-argument", api, loc,
         "tiling.oneTmpSize is 0: the LayerNormTiling was not filled (GetLayerNormNDTilingInfo), or its "
         "stackBufferSize was too small for one row");
  const uint32_t H = t.hLength, oriH = t.originalHLength;
  if (H == 0 || H * sizeof(T) % kBlk || oriH == 0 || oriH > H)
    fail("api-argument", api, loc,
         strf("tiling hLength %u (x sizeof(T) must be a multiple of 32), originalHLength %u (must be in (0, hLength])",
              H, oriH));
  const uint64_t rows = uint64_t(t.bLength) * t.sLength, total = rows * H;
  if (rows == 0 || x.GetSize() < total || out.GetSize() < total || mean.GetSize() < rows || var.GetSize() < rows ||
      gamma.GetSize() < H || beta.GetSize() < H)
    fail("api-argument", api, loc,
         strf("B x S x H = %u x %u x %u, but inputX holds %u, output %u, outputMean %u, outputVariance %u (need B x "
              "S), gamma %u and beta %u elements (need H)",
              t.bLength, t.sLength, H, x.GetSize(), out.GetSize(), mean.GetSize(), var.GetSize(), gamma.GetSize(),
              beta.GetSize()));
  if (uint64_t(t.thirdTmpStartPos) + t.oneTmpSize > t.tmpBufSize && !(reuse && sizeof(T) == 4))
    fail("api-argument", api, loc,
         strf("tiling thirdTmpStartPos %u + oneTmpSize %u exceeds tmpBufSize %u: not a tiling "
              "GetLayerNormNDTilingInfo gives", t.thirdTmpStartPos, t.oneTmpSize, t.tmpBufSize));
  if (tmp) {
    const uint32_t host_min = layernorm_min_tmp(uint32_t(rows), H, sizeof(T), reuse);
    if (tmp->GetSize() < host_min || tmp->GetSize() / 4 < t.tmpBufSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetLayerNormMaxMinTmpSize gives as the minimum "
                "for [B x S = %llu, H = %u], or the tiling's tmpBufSize %u floats (the stackBufferSize it was made for)",
                tmp->GetSize(), host_min, static_cast<unsigned long long>(rows), H, t.tmpBufSize));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(out, total, "output").dst(mean, rows, "outputMean").dst(var, rows, "outputVariance");
  c.src(x, total, "inputX").src(gamma, H, "gamma").src(beta, H, "beta");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bool gb = false;
    for (uint32_t h = 0; h < H && !gb; ++h)
      gb = ApiCall::lane_poisoned(c.operand(4), h) || ApiCall::lane_poisoned(c.operand(5), h);
    bad.assign(rows, gb ? 2 : 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint32_t h = 0; h < H && !(bad[r] & 1); ++h)
        if (ApiCall::lane_poisoned(c.operand(3), r * H + h)) bad[r] |= 1;
  }
  ctx().stats.vector_elems += total;
  std::vector<float> g(H), b(H), xf(H), sc(H), d(H);
  for (uint32_t h = 0; h < H; ++h) g[h] = to_f(gamma.data()[h]), b[h] = to_f(beta.data()[h]);
  const float back = t.lastDimValueBack, e = to_f(eps);
  std::vector<uint8_t> done(rows, 0);
  // one round: `n` rows from row r0 (CANN's LayerNormExe on bshCurLength / bsCurLength)
  auto round = [&](uint64_t r0, uint64_t n) {
    for (uint64_t r = r0; r < r0 + n && r < rows; ++r) {
      const T* xr = x.data() + r * H;
      for (uint32_t h = 0; h < H; ++h) xf[h] = to_f(xr[h]), sc[h] = xf[h] * back;
      const float m = ln_row_sum(sc.data(), H);
      for (uint32_t h = 0; h < H; ++h) d[h] = xf[h] - m, sc[h] = (d[h] * d[h]) * back;
      const float v = ln_row_sum(sc.data(), H);
      const float rstd = 1.0f / hm::sqrt(v + e);
      T* yr = out.data() + r * H;
      T* xw = reuse ? x.data() + r * H : nullptr;
      for (uint32_t h = 0; h < H; ++h) {
        const float yg = (rstd * d[h]) * g[h];
        if (xw) xw[h] = from_f<T>(yg);  // reuse: the work CANN leaves in inputX (float only)
        yr[h] = from_f<T>(yg + b[h]);
      }
      mean.data()[r] = from_f<T>(m);
      var.data()[r] = from_f<T>(v);
      done[r] = 1;
    }
  };
  for (uint32_t i = 0; i < t.loopRound; ++i)
    round(uint64_t(i) * t.meanVarRoundSize, t.bsCurLength);
  if (t.inputTailSize > 0) {
    t.bshCurLength = t.inputTailSize;  // as the device does: the caller's tiling keeps the tail's lengths
    t.bsCurLength = t.meanVarTailSize;
    round(t.meanVarTailPos, t.meanVarTailSize);
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t r = 0; r < rows; ++r) {
    if (!done[r]) continue;
    const bool rowok = bad.empty() || !bad[r], xok = bad.empty() || !(bad[r] & 1);
    shadow_fill(out.m_.ub_off() + static_cast<uint32_t>(r * H * sizeof(T)), static_cast<uint32_t>(H * sizeof(T)),
                rowok);
    shadow_fill(mean.m_.ub_off() + static_cast<uint32_t>(r * sizeof(T)), sizeof(T), xok);
    shadow_fill(var.m_.ub_off() + static_cast<uint32_t>(r * sizeof(T)), sizeof(T), xok);
    if (reuse)
      shadow_fill(x.m_.ub_off() + static_cast<uint32_t>(r * H * sizeof(T)), static_cast<uint32_t>(H * sizeof(T)),
                  rowok);
  }
}
}  // namespace opkit_emu

// WelfordUpdate (include/adv_api/normalization/layernorm.h:175-200; page 高阶API/归一化操作/WelfordUpdate.md), as the A2 code computes it
// (layernorm_common_impl.h:357-533, layernorm_common_basic_impl.h:312-346), element by element over the first
// abComputeLength of [1, abLength], in float (a half inputX cast first), each step rounded to float:
// d = x - inMean, outMean = d x nRec + inMean, outVar = d x (x - outMean) + inVar. config.isInplace copies inMean /
// inVar into the outputs over the block-aligned tail beyond abComputeLength (WelfordUpdateInplace :395-399);
// without it those outputs are not written. isReuseSource (float): inputX ends holding x - inMean. Checked as
// CANN's CPU-debug asserts do (:487-523, api-argument): rnLength 1, abLength a multiple of 32 / sizeof(T) and
// within inputX and the float tensors, abComputeLength in (0, abLength]; a sharedTmpBuffer below
// GetWelfordUpdateMaxMinTmpSize's minimum (256 bytes x 3 for half, x 1 with isReuseSource, x 2 otherwise,
// impl/adv_api/tiling/normalization/layernorm_tiling_impl.cpp:255-262) is tensor-bounds. Poison: an output
// element is poison when one of its inputs is.
namespace opkit_emu {
template <class T, class U, bool reuse>
void adv_welford_update(const AscendC::LocalTensor<U>& omean, const AscendC::LocalTensor<U>& ovar,
                        const AscendC::LocalTensor<U>& imean, const AscendC::LocalTensor<U>& ivar,
                        const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<uint8_t>* tmp,
                        const AscendC::WelfordUpdateParam& p, bool inplace, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: WelfordUpdate's inputX is half or float (WelfordUpdate.md, A2)");
  static_assert(std::is_same<U, float>::value, "opkit emulator: WelfordUpdate's mean / variance are float");
  const char* api = "WelfordUpdate";
  if (p.rnLength != 1 || p.abLength == 0 || p.abLength % (kBlk / sizeof(T)) || p.abComputeLength == 0 ||
      p.abComputeLength > p.abLength)
    fail("api-argument", api, loc,
         strf("para rnLength %u (must be 1), abLength %u (a multiple of %zu), abComputeLength %u (in (0, abLength])",
              p.rnLength, p.abLength, kBlk / sizeof(T), p.abComputeLength));
  const uint32_t n = p.abLength, m = p.abComputeLength;
  if (x.GetSize() < n || omean.GetSize() < n || ovar.GetSize() < n || imean.GetSize() < n || ivar.GetSize() < n)
    fail("api-argument", api, loc,
         strf("para.abLength %u, but inputX holds %u, outputMean %u, outputVariance %u, inputMean %u and "
              "inputVariance %u elements", n, x.GetSize(), omean.GetSize(), ovar.GetSize(), imean.GetSize(),
              ivar.GetSize()));
  if (tmp) {
    const uint32_t need = 256 * (sizeof(T) == 2 ? 3 : reuse ? 1 : 2);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetWelfordUpdateMaxMinTmpSize gives as the "
                "minimum", tmp->GetSize(), need));
  }
  constexpr bool rs = reuse && sizeof(T) == 4;  // half never reuses its source (WelfordUpdateGetTmpSize)
  // the in-place tail: block-aligned, so it may start inside the computed range (computed values win)
  const uint32_t tail = inplace && m < n ? (n - m + 7) / 8 * 8 : 0, tail_at = n - std::min(tail, n);
  ApiCall c(Pipe::V, api, loc);
  c.dst(omean, tail ? n : m, "outputMean").dst(ovar, tail ? n : m, "outputVariance");
  c.src(imean, tail ? n : m, "inputMean").src(ivar, tail ? n : m, "inputVariance").src(x, m, "inputX");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bm, bv;
  if (c.commit(Flow::Manual)) {
    bm.assign(n, 0);
    bv.assign(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      const bool in_range = i < m;
      const bool pm = ApiCall::lane_poisoned(c.operand(2), i), pv = ApiCall::lane_poisoned(c.operand(3), i);
      const bool px = in_range && ApiCall::lane_poisoned(c.operand(4), i);
      bm[i] = in_range ? (px || pm) : pm;
      bv[i] = in_range ? (px || pm || pv) : pv;
    }
  }
  ctx().stats.vector_elems += m;
  std::vector<float> rm(n), rv(n), rx(m);
  for (uint32_t i = tail_at; i < n && tail; ++i) rm[i] = imean.data()[i], rv[i] = ivar.data()[i];
  for (uint32_t i = 0; i < m; ++i) {
    const float xi = to_f(x.data()[i]), im = imean.data()[i], d = xi - im;
    rm[i] = d * p.nRec + im;
    rv[i] = d * (xi - rm[i]) + ivar.data()[i];
    rx[i] = d;
  }
  const uint32_t top = tail ? n : m;
  for (uint32_t i = 0; i < top; ++i) {
    if (i >= m && i < tail_at) continue;  // between the computed range and the aligned tail: not written
    omean.data()[i] = rm[i];
    ovar.data()[i] = rv[i];
    shadow_fill(omean.m_.ub_off() + i * 4, 4, bm.empty() || !bm[i]);
    shadow_fill(ovar.m_.ub_off() + i * 4, 4, bv.empty() || !bv[i]);
  }
  if (rs)
    for (uint32_t i = 0; i < m; ++i) x.data()[i] = from_f<T>(rx[i]);
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
}
}  // namespace opkit_emu

// The rstd form of LayerNorm (include/adv_api/normalization/layernorm.h:62-96; LayerNorm.md's second prototype), as
// the A2 code computes it (layernorm_common_impl.h:224-355 then Normalize, impl/adv_api/detail/normalization/
// normalize/normalize_common_impl.h): per row of [aLength, rLengthWithPadding], when rLength < rLengthWithPadding
// the padding of inputX is first multiplied by 0 in place (LayerNormPreProc, layernorm_common_basic_impl.h:296-310);
// in float (half cast in): mean = sum(x x rValueBack), var = sum((x - mean)^2 x rValueBack), both over
// rLengthWithPadding in LayerNorm's row-sum order (the zeroed padding adds 0), rstd = 1 / sqrt(var + eps),
// output = (x - mean) x rstd x gamma + beta over the first rLength columns (config.isNoGamma / isNoBeta leave the
// factor / term out; gamma / beta of type U, float or half, cast to float), outputMean / outputRstd float. The
// output's padding columns are computed from a broadcast buffer the code fills only over rLength: not defined --
// the emulator leaves them unwritten and marks them poison. As on the device the rounds write the tail's lengths
// into the tiling (arCurLength / aCurLength), though it is passed const. Checked: U / T as CheckLayerNormRstd allows
// (float / float, half / half or float), config.isOnlyOutput false (compile errors); the tiling filled (oneTmpSize
// > 0, else GetLayerNormNDTilingInfo with isComputeRstd was not run), rLengthWithPadding x sizeof(T) a multiple of
// 32 and 0 < rLength <= rLengthWithPadding, tensors too small (api-argument); a sharedTmpBuffer below
// GetLayerNormMaxMinTmpSize's minimum (align32(A x 4) + max(2 x align32(R x 4), Normalize's minimum max(align32(A x 4),
// (2 or 4 for half) x align32(R x 4))), impl/adv_api/tiling/normalization/layernorm_tiling_impl.cpp:266-322,
// normalize_tiling_impl.cpp) or the tiling's tmpBufSize floats is tensor-bounds.
namespace opkit_emu {
inline uint32_t layernorm_rstd_min_tmp(uint32_t a, uint32_t rwp, uint32_t size) {
  const uint32_t mv = (a * 4 + 31) / 32 * 32, r = (rwp * 4 + 31) / 32 * 32;
  const uint32_t norm = std::max(mv, (size == 4 ? 2 : 4) * r);
  return mv + std::max(2 * r, norm);
}

template <class U, class T, const AscendC::LayerNormConfig& config, class Tiling>
void adv_layernorm_rstd(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<float>& mean,
                        const AscendC::LocalTensor<float>& rstd, const AscendC::LocalTensor<T>& x,
                        const AscendC::LocalTensor<U>& gamma, const AscendC::LocalTensor<U>& beta, float eps,
                        const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::LayerNormPara& p, const Tiling& tc,
                        SrcLoc loc) {
  static_assert((std::is_same<T, float>::value && std::is_same<U, float>::value) ||
                    (std::is_same<T, half>::value && (std::is_same<U, half>::value || std::is_same<U, float>::value)),
                "opkit emulator: LayerNorm (rstd form) takes T float with U float, or T half with U half or float");
  static_assert(!config.isOnlyOutput, "not supported on the emulator: LayerNorm with config.isOnlyOutput (A2: false only)");
  const char* api = "LayerNorm";
  Tiling& t = const_cast<Tiling&>(tc);  // CANN's code writes the tail's lengths into it too
  if (t.oneTmpSize == 0)
    fail("api-argument", api, loc,
         "tiling.oneTmpSize is 0: the LayerNormSeparateTiling was not filled (GetLayerNormNDTilingInfo with "
         "isComputeRstd)");
  const uint32_t A = p.aLength, R = p.rLength, W = p.rLengthWithPadding;
  if (A == 0 || R == 0 || R > W || W * sizeof(T) % kBlk)
    fail("api-argument", api, loc,
         strf("para aLength %u, rLength %u, rLengthWithPadding %u (x sizeof(T) a multiple of 32, at least rLength)",
              A, R, W));
  const uint64_t total = uint64_t(A) * W;
  if (x.GetSize() < total || out.GetSize() < total || mean.GetSize() < A || rstd.GetSize() < A ||
      (!config.isNoGamma && gamma.GetSize() < R) || (!config.isNoBeta && beta.GetSize() < R))
    fail("api-argument", api, loc,
         strf("[A, R] = [%u, %u (padded %u)], but inputX holds %u, output %u (need A x padded R), outputMean %u, "
              "outputRstd %u (need A), gamma %u and beta %u elements (need R)",
              A, R, W, x.GetSize(), out.GetSize(), mean.GetSize(), rstd.GetSize(), gamma.GetSize(), beta.GetSize()));
  if (tmp) {
    const uint32_t need = layernorm_rstd_min_tmp(A, W, sizeof(T));
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetLayerNormMaxMinTmpSize gives as the minimum for "
                "[A = %u, R = %u]", tmp->GetSize(), need, A, W));
    if (tmp->GetSize() / 4 < t.tmpBufSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the tiling's tmpBufSize %u floats", tmp->GetSize(),
                t.tmpBufSize));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(out, total, "output").dst(mean, A, "outputMean").dst(rstd, A, "outputRstd").src(x, total, "inputX");
  if (!config.isNoGamma) c.src(gamma, R, "gamma");
  if (!config.isNoBeta) c.src(beta, R, "beta");
  if (R < W) c.dst(x, total, "inputX (padding zeroed)");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bool gb = false;
    int k = 4;
    for (int which = 0; which < 2; ++which) {
      const bool used = which == 0 ? !config.isNoGamma : !config.isNoBeta;
      if (!used) continue;
      for (uint32_t r = 0; r < R && !gb; ++r) gb = ApiCall::lane_poisoned(c.operand(k), r);
      ++k;
    }
    bad.assign(A, gb ? 2 : 0);
    for (uint32_t a = 0; a < A; ++a)
      for (uint32_t r = 0; r < R && !(bad[a] & 1); ++r)
        if (ApiCall::lane_poisoned(c.operand(3), uint64_t(a) * W + r)) bad[a] |= 1;
  }
  ctx().stats.vector_elems += total;
  std::vector<float> g(R, 1.0f), b(R, 0.0f), xf(W), sc(W);
  for (uint32_t r = 0; r < R; ++r) {
    if (!config.isNoGamma) g[r] = to_f(gamma.data()[r]);
    if (!config.isNoBeta) b[r] = to_f(beta.data()[r]);
  }
  const float back = t.rValueBack;
  for (uint32_t a = 0; a < A; ++a) {
    T* xr = x.data() + uint64_t(a) * W;
    for (uint32_t r = R; r < W; ++r) xr[r] = from_f<T>(to_f(xr[r]) * 0.0f);  // LayerNormPreProc's mask
    for (uint32_t r = 0; r < W; ++r) xf[r] = to_f(xr[r]), sc[r] = xf[r] * back;
    const float m = ln_row_sum(sc.data(), W);
    for (uint32_t r = 0; r < W; ++r) {
      const float d = r < R ? xf[r] + -m : xf[r];
      sc[r] = (d * d) * back;
    }
    const float v = ln_row_sum(sc.data(), W);
    const float rs = 1.0f / hm::sqrt(v + eps);
    mean.data()[a] = m;
    rstd.data()[a] = rs;
    T* yr = out.data() + uint64_t(a) * W;
    for (uint32_t r = 0; r < R; ++r) {
      float y = (xf[r] - m) * rs;
      if (!config.isNoGamma) y = y * g[r];
      if (!config.isNoBeta) y = y + b[r];
      yr[r] = from_f<T>(y);
    }
  }
  if (t.inputTailSize > 0) t.arCurLength = t.inputTailSize, t.aCurLength = t.meanVarTailSize;
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t a = 0; a < A; ++a) {
    const bool rowok = bad.empty() || !bad[a], xok = bad.empty() || !(bad[a] & 1);
    const uint32_t off = static_cast<uint32_t>(uint64_t(a) * W * sizeof(T));
    shadow_fill(out.m_.ub_off() + off, static_cast<uint32_t>(R * sizeof(T)), rowok);
    if (R < W)  // the padding columns: not defined on the device
      shadow_fill(out.m_.ub_off() + off + static_cast<uint32_t>(R * sizeof(T)),
                  static_cast<uint32_t>((W - R) * sizeof(T)), false);
    shadow_fill(mean.m_.ub_off() + a * 4, 4, xok);
    shadow_fill(rstd.m_.ub_off() + a * 4, 4, xok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, class LayerNormTilingT>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, LayerNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta,
                                               &sharedTmpBuffer, epsilon, tiling, loc);
}
template <typename T, bool isReuseSource = false, class LayerNormTilingT>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
               LayerNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, nullptr,
                                               epsilon, tiling, loc);
}
// On A2 but not implemented here: a call stops the build naming it (never a silent stub)
template <typename U, typename T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM,
          class LayerNormSeparateTilingT>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean, const LocalTensor<float>& outputRstd,
               const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
               const float epsilon, const LayerNormPara& para, const LayerNormSeparateTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm_rstd<U, T, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon, nullptr,
                                                para, tiling, loc);
}
template <typename U, typename T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM,
          class LayerNormSeparateTilingT>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean, const LocalTensor<float>& outputRstd,
               const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
               const float epsilon, const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormPara& para,
               const LayerNormSeparateTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_layernorm_rstd<U, T, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon,
                                                &sharedTmpBuffer, para, tiling, loc);
}
template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                   const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance, const LocalTensor<T>& inputX,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const WelfordUpdateParam& para, OPKIT_LOC) {
  ::opkit_emu::adv_welford_update<T, U, isReuseSource>(outputMean, outputVariance, inputMean, inputVariance, inputX,
                                                       &sharedTmpBuffer, para, config.isInplace, loc);
}
template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                   const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance, const LocalTensor<T>& inputX,
                   const WelfordUpdateParam& para, OPKIT_LOC) {
  ::opkit_emu::adv_welford_update<T, U, isReuseSource>(outputMean, outputVariance, inputMean, inputVariance, inputX,
                                                       nullptr, para, config.isInplace, loc);
}
}  // namespace AscendC
