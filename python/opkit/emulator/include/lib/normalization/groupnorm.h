// CANN's lib/normalization/groupnorm.h (asc-devkit 82b89a15 include/adv_api/normalization/groupnorm.h; page
// docs/zh/api/SIMD-API/高阶API/归一化操作/GroupNorm.md): GroupNorm of an [N, C, H, W] ND tensor, C split into
// groupNum groups of d = C / groupNum channels, half and float, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false>
//   GroupNorm(output, outputMean, outputVariance, inputX, gamma, beta[, sharedTmpBuffer], const T epsilon,
//             GroupNormTiling& tiling)
// Layout as the A2 code reads it: each channel's H x W row padded to 32 bytes (tiling.hwAlignSize elements), a group
// the d x hwAlignSize elements of its channels; mean / variance hold N x groupNum, gamma / beta C.
// Computed as impl/adv_api/detail/normalization/groupnorm/groupnorm_common_impl.h does, in float (half: inputX cast
// to float, gamma / beta / epsilon too, the outputs cast back once), each step rounded to float, per group:
// sum = ReduceSum over its d x hwAlignSize elements (:65-86: the level-2 ReduceSum order, one tree per 64-float
// repeat, the repeats added in order), or with tiling.smallShape two WholeReduceSum trees (:266-281: mask1 lanes
// per repeat, then the partial sums), mean = sum x factor; t = x - mean on the H x W lanes of each channel; var = the
// same reduction of t x t, x factor; rstd = 1 / Sqrt(var + eps) (:120-170); out = t x rstd x gamma[c] + beta[c]
// (:172-193). The padding lanes take part as the code has them: inputX's padding is in the mean's sum; for float
// the t of a padding lane is 0 (the output was zeroed first, :241, :369), for half it is the padding's own value
// (t is computed in place in the cast input, :204-212), and the output's padding lanes end as t x rstd. So pad
// with zeros, as the page's example does, and the statistics are those of the H x W values. One A2 detail is kept:
// in the smallShape float tail round (mvOffset != 0) the code zeroes one output lane per group instead of the round
// (:358-367), so t of a padding lane there is the output's previous content (read, poison included).
// Equal to CANN's within the rounding of Sqrt and Div (the emulator's IEEE float); not checked on a device.
// isReuseSource (float only; half is refused as CANN's kernel check does, groupnorm_check_common.h): inputX itself
// (not the round's part) is the first work buffer (:480-481), written by every round: with smallShape its first
// inputRoundSize floats (:420-425, :444), otherwise the lanes below N x groupNum (GetGroupNormOutputPre's masked
// lanes, :133-146) -- the emulator poisons those; the rest of inputX keeps its values.
// The rounds follow the tiling (bsCurLength groups, then the tail), restoring the tiling's round lengths after
// the tail as the code does (:544-564).
// Checked (api-argument): gamma / beta within [-100, 100] (the page's range), the tiling filled (oneTmpSize > 0, :580),
// thirdTmpStartPos (secondTmpStartPos with isReuseSource) + oneTmpSize <= tmpBufSize (:460-499), c a multiple of g (a
// check the emulator adds: GroupNorm.md only says C splits into groupNum groups, and the tiling truncates d = c / g,
// groupnorm_tiling_impl.cpp:118, leaving CANN's result undefined), the tensors holding N x C x hwAlignSize / N x
// groupNum / C, output / outputMean / outputVariance not the same tensor (CANN's kernel check, groupnorm_check_common.h:62-63)
// nor overlapping (the emulator's, adv_disjoint.h);
// not-emulated: N x groupNum > 64 on the path without smallShape, a CANN defect -- GetGroupNormOutputMean / Var
// scale each group's sum by a Muls from element 0 with repeat 1 under the mask 1 << (group index), the index not
// reduced mod 64 (:76-79, :112-115; the smallShape path and GetGroupNormOutputPre do reduce it, :127-130, :284-286):
// groups 64 and up are never scaled by factor (and a wrapping shift would scale a lane below 64 twice), so the
// device's mean / variance / output are wrong however the shift behaves. tensor-bounds: a sharedTmpBuffer below
// GetGroupNormMaxMinTmpSize's minimum (groupnorm_tiling_impl.cpp:42-76) or below the tiling's tmpBufSize floats (:465-469). Poison: a group is poison in every output when one of
// its inputX lanes (or, in the case above, previous output lanes) is; the output too when a gamma / beta lane is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_disjoint.h"
#include "opkit_emu/host_math.h"
#include "opkit_emu/reduce.h"

namespace opkit_emu {
// GetGroupNormMaxMinTmpSize's minimum (groupnorm_tiling_impl.cpp:42-76)
inline uint32_t groupnorm_min_tmp(uint32_t n, uint32_t c, uint32_t hw, uint32_t g, uint32_t size, bool reuse) {
  const uint32_t mv = (n * g * 4 + 31) / 32 * 32;
  const uint32_t dhw = c / g * ((hw * size + 31) / 32 * 32 / size * 4);
  return (reuse && size == 4 ? 2 : 3) * dhw + 2 * mv;
}

// the smallShape sum of one group (groupnorm_common_impl.h:266-281): a WholeReduceSum tree per mask1 lanes, the
// partials written 8 floats apart, then one WholeReduceSum tree over those 64 lanes
inline float groupnorm_small_sum(const float* v, uint32_t n, uint32_t mask1) {
  float lanes[64] = {};
  for (uint32_t k = 0; k * mask1 < n; ++k) {
    float part[64] = {};
    for (uint32_t j = 0; j < mask1; ++j) part[j] = v[k * mask1 + j];
    lanes[k * 8] = tree_repeat_f32(part);
  }
  return tree_repeat_f32(lanes);
}

template <class T, bool reuse, class Tiling>
void adv_groupnorm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean,
                   const AscendC::LocalTensor<T>& var, const AscendC::LocalTensor<T>& x,
                   const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<T>& beta,
                   const AscendC::LocalTensor<uint8_t>* tmp, T eps, Tiling& t, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: GroupNorm supports half and float (GroupNorm.md, A2)");
  const char* api = "GroupNorm";
  constexpr bool isf = sizeof(T) == 4;
  if (reuse && !isf)
    fail("api-argument", api, loc,
         "isReuseSource must be false for half: CANN's kernel check refuses it (groupnorm_check_common.h)");
  if (t.oneTmpSize == 0)
    fail("api-argument", api, loc,
         "tiling.oneTmpSize is 0: the GroupNormTiling was not filled (GetGroupNormNDTilingInfo refused the shape, or "
         "for half one round of its stackBufferSize cannot hold C channels)");
  const uint32_t last = reuse ? t.secondTmpStartPos : t.thirdTmpStartPos;
  if (last + t.oneTmpSize > t.tmpBufSize)
    fail("api-argument", api, loc,
         strf("tiling %s + oneTmpSize (%u) exceeds tmpBufSize (%u)", reuse ? "secondTmpStartPos" : "thirdTmpStartPos",
              last + t.oneTmpSize, t.tmpBufSize));
  const uint32_t N = t.n, C = t.c, G = t.g, D = t.d, HW = t.hw, HWA = t.hwAlignSize, DHW = t.dhwAlignSize;
  if (G == 0 || C % G || D != C / G || HW == 0 || HW > HWA || HWA * sizeof(T) % kBlk || DHW != D * HWA ||
      t.inputXSize != N * C * HWA || t.meanVarSize != N * G)
    fail("api-argument", api, loc,
         strf("tiling n %u, c %u, g %u, d %u, hw %u, hwAlignSize %u, dhwAlignSize %u: C must be a multiple of groupNum "
              "(an emulator check: CANN's tiling truncates d = C / groupNum, an undefined result) and the sizes be "
              "GetGroupNormNDTilingInfo's", N, C, G, D, HW, HWA, DHW));
  const uint32_t groups = N * G;
  if (!t.smallShape && groups > 64)
    fail("not-emulated", api, loc,
         strf("N x groupNum = %u > 64 without smallShape: the A2 code gives wrong mean / variance there (a CANN "
              "defect) -- it scales each group's sum by factor with one Muls repeat from element 0 under the mask "
              "1 << (group index), the index not reduced mod 64 (groupnorm_common_impl.h:76-79, :112-115), so groups "
              "64 and up are never scaled; call GroupNorm on at most 64 groups at a time", groups));
  const uint64_t total = uint64_t(N) * C * HWA;
  if (x.GetSize() < total || out.GetSize() < total || mean.GetSize() < groups || var.GetSize() < groups ||
      gamma.GetSize() < C || beta.GetSize() < C)
    fail("api-argument", api, loc,
         strf("N x C x hwAlignSize = %u x %u x %u, but inputX holds %u, output %u (need N x C x hwAlignSize), "
              "outputMean %u, outputVariance %u (need N x groupNum = %u), gamma %u and beta %u elements (need C)",
              N, C, HWA, x.GetSize(), out.GetSize(), mean.GetSize(), var.GetSize(), groups, gamma.GetSize(),
              beta.GetSize()));
  if (tmp) {
    const uint32_t host_min = groupnorm_min_tmp(N, C, HW, G, sizeof(T), reuse);
    if (tmp->GetSize() < host_min)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetGroupNormMaxMinTmpSize gives as the minimum "
                "for [N = %u, C = %u, H x W = %u], groupNum %u", tmp->GetSize(), host_min, N, C, HW, G));
    if (tmp->GetSize() / 4 < t.tmpBufSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the tiling's tmpBufSize %u floats (the stackBufferSize it was "
                "made for)", tmp->GetSize(), t.tmpBufSize));
  }
  adv_check_disjoint(api, loc, {used_range(out, total, "output"), used_range(mean, groups, "outputMean"),
                                used_range(var, groups, "outputVariance")});
  ApiCall c(Pipe::V, api, loc);
  c.dst(out, total, "output").dst(mean, groups, "outputMean").dst(var, groups, "outputVariance");
  c.src(x, total, "inputX").src(gamma, C, "gamma").src(beta, C, "beta");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const bool tracked = c.commit(Flow::Manual);
  bool gb = false;
  if (tracked)
    for (uint32_t ch = 0; ch < C && !gb; ++ch)
      gb = ApiCall::lane_poisoned(c.operand(4), ch) || ApiCall::lane_poisoned(c.operand(5), ch);
  ctx().stats.vector_elems += total;
  std::vector<float> g(C), b(C), xv(DHW), tv(DHW), sq(DHW);
  for (uint32_t ch = 0; ch < C; ++ch) {
    g[ch] = to_f(gamma.data()[ch]), b[ch] = to_f(beta.data()[ch]);
    const bool undefined =  // a poisoned lane holds no value to check; it poisons the output instead
        tracked && (ApiCall::lane_poisoned(c.operand(4), ch) || ApiCall::lane_poisoned(c.operand(5), ch));
    if (!undefined && (!(g[ch] >= -100.0f && g[ch] <= 100.0f) || !(b[ch] >= -100.0f && b[ch] <= 100.0f)))
      fail("api-argument", api, loc,
           strf("gamma[%u] = %g, beta[%u] = %g: GroupNorm.md allows gamma and beta only in [-100, 100]", ch,
                double(g[ch]), ch, double(b[ch])));
  }
  const float e = to_f(eps), factor = t.factor;
  uint32_t mask1 = DHW;  // GetGroupNormWholeReduceMask1 (:52-63)
  if (DHW > 64) {
    mask1 = 64;
    while (mask1 != 0 && DHW % mask1 != 0) mask1 -= 8;
  }
  auto sum = [&](const float* v) {
    return t.smallShape ? groupnorm_small_sum(v, DHW, mask1) : reduce_sum_loop<float>(v, DHW);
  };
  std::vector<float> mf(groups, 0.0f), vf(groups, 0.0f);
  std::vector<uint8_t> bad(groups, 0), done(groups, 0);
  auto group = [&](uint32_t r, bool stale_pad) {
    const uint64_t base = uint64_t(r) * DHW;
    bool xbad = false;
    for (uint32_t i = 0; i < DHW; ++i) {
      xv[i] = to_f(x.data()[base + i]);
      if (tracked && !xbad) xbad = ApiCall::lane_poisoned(c.operand(3), base + i);
    }
    const float m = sum(xv.data()) * factor;
    for (uint32_t j = 0; j < D; ++j)
      for (uint32_t i = 0; i < HWA; ++i) {
        const uint32_t k = j * HWA + i;
        if (i < HW) tv[k] = xv[k] - m;
        else if (!isf) tv[k] = xv[k];  // half: t is computed in place in the cast input
        else if (stale_pad) {          // the smallShape float tail round: the output's previous lane
          tv[k] = to_f(out.data()[base + k]);
          if (tracked && !xbad) xbad = ApiCall::lane_poisoned(c.operand(0), base + k);
        } else tv[k] = 0.0f;
        sq[k] = tv[k] * tv[k];
      }
    const float v = sum(sq.data()) * factor;
    const float rstd = 1.0f / hm::sqrt(v + e);
    for (uint32_t j = 0; j < D; ++j) {
      const uint32_t ch = (r * D + j) % C;
      for (uint32_t i = 0; i < HWA; ++i) {
        const uint32_t k = j * HWA + i;
        const float y = tv[k] * rstd;
        out.data()[base + k] = from_f<T>(i < HW ? y * g[ch] + b[ch] : y);
      }
    }
    mf[r] = m, vf[r] = v, bad[r] = xbad, done[r] = 1;
  };
  for (uint32_t i = 0; i < t.loopRound; ++i)
    for (uint32_t r = i * t.bsCurLength; r < (i + 1) * t.bsCurLength && r < groups; ++r) group(r, false);
  if (t.inputTailSize > 0) {
    const uint32_t r0 = t.meanVarTailPos;
    if (t.smallShape && isf && r0 != 0)  // the one lane per group that code zeroes (:358-367), inside the output
      for (uint32_t r = r0; r < r0 + t.meanVarTailSize && r < groups; ++r)
        if (uint64_t(r0) * DHW + r < total) out.data()[uint64_t(r0) * DHW + r] = from_f<T>(0.0f);
    for (uint32_t r = r0; r < r0 + t.meanVarTailSize && r < groups; ++r) group(r, t.smallShape && isf && r0 != 0);
  }
  for (uint32_t r = 0; r < groups; ++r)
    if (done[r]) mean.data()[r] = from_f<T>(mf[r]), var.data()[r] = from_f<T>(vf[r]);
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  if (reuse) {  // inputX (its start, not the round's) is tempTensorA (:480-481): poison what A2 writes there
    // :420-425, :444; GetGroupNormOutputPre also writes lane (group index mod 64) of it (:125-147)
    const uint64_t pre = groups < 64 ? groups : 64;
    const uint64_t used = t.smallShape ? (t.inputRoundSize > pre ? t.inputRoundSize : pre) : groups;
    shadow_fill(x.m_.ub_off(), static_cast<uint32_t>((used < total ? used : total) * sizeof(T)), false);
  }
  for (uint32_t r = 0; r < groups; ++r) {
    if (!done[r]) continue;
    const uint32_t len = DHW * sizeof(T), off = static_cast<uint32_t>(uint64_t(r) * len);
    shadow_fill(out.m_.ub_off() + off, len, !bad[r] && !gb);
    shadow_fill(mean.m_.ub_off() + r * sizeof(T), sizeof(T), !bad[r]);
    shadow_fill(var.m_.ub_off() + r * sizeof(T), sizeof(T), !bad[r]);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, class GroupNormTilingT>
void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, GroupNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_groupnorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta,
                                               &sharedTmpBuffer, epsilon, tiling, loc);
}
template <typename T, bool isReuseSource = false, class GroupNormTilingT>
void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
               GroupNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_groupnorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, nullptr,
                                               epsilon, tiling, loc);
}
}  // namespace AscendC
