// CANN's lib/normalization/welfordfinalize.h (asc-devkit 82b89a15 include/adv_api/normalization/welfordfinalize.h:
// 33-80, the A2 forms; WelfordFinalizePara / WelfordFinalizeConfig include/adv_api/normalization/
// welfordfinalize_utils.h:27-45; page docs/zh/api/SIMD-API/高阶API/归一化操作/WelfordFinalize.md): the last step of
// Welford's algorithm, the abLength partial means / variances (M2 sums) of WelfordUpdate reduced to one mean and one
// variance, with or without per-element counts, with or without sharedTmpBuffer:
//   template <bool isReuseSource = false>
//   WelfordFinalize(outputMean, outputVariance, inputMean, inputVariance[, counts][, sharedTmpBuffer], para)
// In float, in the A2 order (impl/adv_api/detail/normalization/welfordfinalize/welfordfinalize_common_impl.h):
// without counts and no tail (tailCountLength or tailCount 0): mean = sum(inputMean x abRec), variance =
// sum((inputVariance + (inputMean - mean)^2 x rnLength) x rRec); with a tail, element i weighs headCount
// (i < headCountLength) or tailCount: mean terms (inputMean x tailCount) x rRec, times headCount / tailCount for the
// head; variance terms (inputMean - mean)^2 x tailCount (x headCount / tailCount), + inputVariance, x rRec; with
// counts (int32): mean terms (inputMean x float(count)) x rRec, variance (inputMean - mean)^2 x float(count) +
// inputVariance, x rRec. The terms are summed in rounds of computeLength elements (LayerNormReduceSumImpl per round,
// a 64-lane WholeReduceSum of the round sums), computeLength = (tmp floats - 128) / 128 x 64 from the
// sharedTmpBuffer (:468-490): bitwise the device's order. The framework form (no sharedTmpBuffer) takes one round
// (CANN pops a stack buffer whose size the emulator does not model): equal within float rounding.
// outputMean / outputVariance get the value at element 0 and 0 at elements 1..7 (:43-55).
// Checked (:492-531): abLength 0 or not a multiple of 8, headCountLength + tailCountLength != abLength, tensors
// too small (api-argument); a sharedTmpBuffer below 1024 bytes, GetWelfordFinalizeMaxMinTmpSize's A2 minimum
// (impl/adv_api/tiling/normalization/welfordfinalize_tiling_impl.cpp:43-52), is tensor-bounds. Not: the
// WelfordFinalizeConfig template argument (Ascend 950 only: a compile error naming it). Poison: every output is
// poison when one of the abLength input lanes (or counts) is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_norm.h"

namespace AscendC {
struct WelfordFinalizeConfig {
  constexpr WelfordFinalizeConfig(const bool isCorrectionIn) : isCorrection(isCorrectionIn) {}
  bool isCorrection = false;
};
constexpr WelfordFinalizeConfig WFFINALIZE_DEFAULT_CFG = {false};
struct WelfordFinalizePara {
  uint32_t rnLength;
  uint32_t abLength;
  uint32_t headCount;
  uint32_t headCountLength;
  uint32_t tailCount;
  uint32_t tailCountLength;
  float abRec;
  float rRec;
};
}  // namespace AscendC

namespace opkit_emu {
constexpr uint32_t kWelfordFinalizeMinTmp = 64 * 4 * 4;  // bytes: four 64-float buffers

inline void welford_finalize(const AscendC::LocalTensor<float>& out_mean, const AscendC::LocalTensor<float>& out_var,
                             const AscendC::LocalTensor<float>& in_mean, const AscendC::LocalTensor<float>& in_var,
                             const AscendC::LocalTensor<int32_t>* counts, const AscendC::LocalTensor<uint8_t>* tmp,
                             const AscendC::WelfordFinalizePara& p, SrcLoc loc) {
  const char* api = "WelfordFinalize";
  const uint32_t n = p.abLength;
  if (n == 0 || n % 8 != 0)
    fail("api-argument", api, loc, strf("abLength %u must be non-zero and 32-byte aligned (a multiple of 8)", n));
  if (p.headCountLength + p.tailCountLength != n)
    fail("api-argument", api, loc,
         strf("headCountLength %u + tailCountLength %u must equal abLength %u", p.headCountLength, p.tailCountLength,
              n));
  if (in_mean.GetSize() < n || in_var.GetSize() < n || out_mean.GetSize() < 8 || out_var.GetSize() < 8 ||
      (counts && counts->GetSize() < n))
    fail("api-argument", api, loc,
         strf("abLength %u, but inputMean holds %u, inputVariance %u%s (need abLength), outputMean %u, "
              "outputVariance %u (need 8)", n, in_mean.GetSize(), in_var.GetSize(),
              counts ? strf(", counts %u", counts->GetSize()).c_str() : "", out_mean.GetSize(), out_var.GetSize()));
  uint32_t len = n;  // elements a round
  if (tmp) {
    if (tmp->GetSize() < kWelfordFinalizeMinTmp)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetWelfordFinalizeMaxMinTmpSize gives as the "
                "minimum", tmp->GetSize(), kWelfordFinalizeMinTmp));
    len = (tmp->GetSize() / 4 - 128) / 128 * 64;
  }
  ApiCall c(Pipe::V, api, loc);
  c.src(in_mean, n, "inputMean").src(in_var, n, "inputVariance");
  if (counts) c.src(*counts, n, "counts");
  c.dst(out_mean, 8, "outputMean").dst(out_var, 8, "outputVariance");
  if (tmp) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const bool bad = c.commit(Flow::Manual);
  ctx().stats.vector_elems += 2ull * n;
  const float* m = in_mean.data();
  const float* v = in_var.data();
  const bool tail = !(p.tailCountLength == 0 || p.tailCount == 0);
  const float ratio = tail ? static_cast<float>(p.headCount) / static_cast<float>(p.tailCount) : 0.0f;
  std::vector<float> t(n);
  // the rounds: each round's terms summed as LayerNormReduceSumImpl, the round sums by a WholeReduceSum of <= 64
  auto reduce = [&]() {
    std::vector<float> part;
    for (uint32_t off = 0; off < n; off += len) {
      part.push_back(ln_row_sum(t.data() + off, std::min(len, n - off)));
      if (part.size() == 64 && off + len < n) part.assign(1, ln_row_sum(part.data(), 64));
    }
    return ln_row_sum(part.data(), static_cast<uint32_t>(part.size()));
  };
  for (uint32_t i = 0; i < n; ++i) {
    if (counts) {
      t[i] = (m[i] * static_cast<float>(counts->data()[i])) * p.rRec;
    } else if (!tail) {
      t[i] = m[i] * p.abRec;
    } else {
      t[i] = (m[i] * static_cast<float>(p.tailCount)) * p.rRec;
      if (i < p.headCountLength) t[i] = t[i] * ratio;
    }
  }
  const float mean = reduce();
  for (uint32_t i = 0; i < n; ++i) {
    const float d = m[i] - mean;
    float s = d * d;
    if (counts) {
      s = s * static_cast<float>(counts->data()[i]);
    } else if (!tail) {
      s = s * static_cast<float>(static_cast<int32_t>(p.rnLength));
    } else {
      s = s * static_cast<float>(p.tailCount);
      if (i < p.headCountLength) s = s * ratio;
    }
    t[i] = (v[i] + s) * p.rRec;
  }
  const float var = reduce();
  // the outputs leave through Adds(x, 0) (welfordfinalize_common_impl.h:59-60): -0 becomes +0
  for (uint32_t k = 0; k < 8; ++k)
    out_mean.data()[k] = k ? 0.0f : mean + 0.0f, out_var.data()[k] = k ? 0.0f : var + 0.0f;
  if (tmp) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  shadow_fill(out_mean.m_.ub_off(), 32, !bad);
  shadow_fill(out_var.m_.ub_off(), 32, !bad);
}
}  // namespace opkit_emu

namespace AscendC {
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, WelfordFinalizePara& para, OPKIT_LOC) {
  ::opkit_emu::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, nullptr, &sharedTmpBuffer, para,
                                loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<int32_t>& counts, const LocalTensor<uint8_t>& sharedTmpBuffer,
                     WelfordFinalizePara& para, OPKIT_LOC) {
  ::opkit_emu::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, &counts, &sharedTmpBuffer, para,
                                loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     WelfordFinalizePara& para, OPKIT_LOC) {
  ::opkit_emu::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, nullptr, nullptr, para, loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<int32_t>& counts, WelfordFinalizePara& para, OPKIT_LOC) {
  ::opkit_emu::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, &counts, nullptr, para, loc);
}
// the Ascend 950 form's config argument (welfordfinalize.h:82-134): named as a compile error on A2
template <bool isReuseSource, const WelfordFinalizeConfig& config, class... A>
void WelfordFinalize(A&&...) {
  static_assert(sizeof...(A) == 0 && false,
                "not supported on the emulator: WelfordFinalize<isReuseSource, WelfordFinalizeConfig> (Ascend 950 only, "
                "WelfordFinalize.md; A2 takes WelfordFinalize<isReuseSource>)");
}
}  // namespace AscendC
