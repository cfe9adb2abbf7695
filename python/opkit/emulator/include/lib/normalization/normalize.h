// CANN's lib/normalization/normalize.h (asc-devkit 82b89a15 include/adv_api/normalization/normalize.h:36-66;
// NormalizeConfig / NormalizePara / ReducePattern include/adv_api/normalization/normalize_utils.h:24-63, the
// NLCFG_* constants impl/adv_api/detail/normalization/normalize/normalize_config.h:28-40; page
// docs/zh/api/SIMD-API/高阶API/归一化操作/Normalize.md): LayerNorm's second half on given statistics, [aLength,
// rLengthWithPadding] ND, T float with U float or T half with U half / float, with and without sharedTmpBuffer:
//   template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
//   Normalize(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta[, sharedTmpBuffer], epsilon, para)
// In float as the A2 code (impl/adv_api/detail/normalization/normalize/normalize_common_impl.h:81-318):
// outputRstd[a] = 1 / sqrt(inputVariance[a] + epsilon) (Adds, Sqrt, Div), then per row over the first rLength
// columns y = (x - mean[a]) x rstd[a] (x gamma unless config.isNoGamma) (+ beta unless config.isNoBeta), half cast
// in (x, and gamma / beta of type half), the output rounded to T once (a float one through Adds(y, 0), so -0 is
// +0): bitwise the A2 steps (each an IEEE float operation). The padding columns rLength..rLengthWithPadding are
// computed from a broadcast buffer the code fills over rLength only: not defined -- the emulator leaves them unwritten and marks them poison. The rows run in
// rounds as the buffer holds them (same result).
// Checked: config.reducePattern AR (api-argument, CANN's debug check normalize_check_common.h:58), T / U as the
// page allows, config.isOnlyOutput false and config.aLength != 1 (compile errors, as CANN's
// static_asserts), config.aLength other than -1 equal to para.aLength, aLength 0, rLength 0 or beyond
// rLengthWithPadding, rLengthWithPadding x sizeof(T) not a multiple of 32, tensors too small (api-argument); a
// sharedTmpBuffer below GetNormalizeMaxMinTmpSize's A2 minimum, max(align32(A x 4), 2 (U float) or 4 (U half) x
// align32(rLengthWithPadding x 4)) bytes (impl/adv_api/tiling/normalization/normalize_tiling_impl.cpp:40-57), is
// tensor-bounds. Poison: a row is poison in output when one of its x lanes, its mean or variance, or a used gamma /
// beta lane is; outputRstd[a] when inputVariance[a] is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it

namespace AscendC {
#ifndef ASCC_ENUM_REDUCEPATTERN
#define ASCC_ENUM_REDUCEPATTERN
enum class ReducePattern : uint32_t {
  AR = 0, RA = 1, R, ARA, ARAR, ARARA, ARARAR, ARARARA, ARARARAR, ARARARARA, RAR, RARA, RARAR, RARARA, RARARAR,
  RARARARA,
};
#endif
struct NormalizeConfig {
  ReducePattern reducePattern = ReducePattern::AR;
  int32_t aLength = -1;
  bool isNoBeta = false;
  bool isNoGamma = false;
  bool isOnlyOutput = false;
};
struct NormalizePara {
  uint32_t aLength;
  uint32_t rLength;
  uint32_t rLengthWithPadding;
};
constexpr NormalizeConfig GetNormalizeConfig(bool isNoBeta, bool isNoGamma) {
  return {ReducePattern::AR, -1, isNoBeta, isNoGamma, false};
}
constexpr NormalizeConfig NLCFG_NORM = GetNormalizeConfig(false, false);
constexpr NormalizeConfig NLCFG_NOBETA = GetNormalizeConfig(true, false);
constexpr NormalizeConfig NLCFG_NOGAMMA = GetNormalizeConfig(false, true);
constexpr NormalizeConfig NLCFG_NOOPT = GetNormalizeConfig(true, true);
}  // namespace AscendC

namespace opkit_emu {
inline uint32_t normalize_min_tmp(uint32_t a, uint32_t rwp, uint32_t size_u) {
  const uint32_t ab = (a * 4 + 31) / 32 * 32, rb = (rwp * 4 + 31) / 32 * 32;
  return std::max(ab, (size_u == 4 ? 2u : 4u) * rb);
}

template <class U, class T, const AscendC::NormalizeConfig& config>
void adv_normalize(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<float>& rstd,
                   const AscendC::LocalTensor<float>& mean, const AscendC::LocalTensor<float>& var,
                   const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<U>& gamma,
                   const AscendC::LocalTensor<U>& beta, const AscendC::LocalTensor<uint8_t>* tmp, float eps,
                   const AscendC::NormalizePara& p, SrcLoc loc) {
  static_assert((std::is_same<T, float>::value && std::is_same<U, float>::value) ||
                    (std::is_same<T, half>::value && (std::is_same<U, half>::value || std::is_same<U, float>::value)),
                "Normalize takes T float with U float, or T half with U half or float (Normalize.md)");
  static_assert(!config.isOnlyOutput, "isOnlyOutput must be set false for now (Normalize: CANN's static_assert)");
  static_assert(config.aLength != 1, "aLength in config must not be 1 (Normalize: CANN's static_assert)");
  const char* api = "Normalize";
  const uint32_t A = p.aLength, R = p.rLength, W = p.rLengthWithPadding;
  // CANN's debug check (api_check/kernel_check/normalization/normalize/normalize_check_common.h:58)
  if (config.reducePattern != AscendC::ReducePattern::AR)
    fail("api-argument", api, loc,
         strf("config.reducePattern %u: Normalize takes only ReducePattern::AR",
              static_cast<uint32_t>(config.reducePattern)));
  if (config.aLength != -1 && static_cast<uint32_t>(config.aLength) != A)
    fail("api-argument", api, loc, strf("config.aLength %d differs from para.aLength %u", config.aLength, A));
  if (A == 0 || R == 0 || R > W || W * sizeof(T) % kBlk)
    fail("api-argument", api, loc,
         strf("para aLength %u, rLength %u, rLengthWithPadding %u (x sizeof(T) a multiple of 32, at least rLength)",
              A, R, W));
  const uint64_t total = uint64_t(A) * W;
  if (x.GetSize() < total || out.GetSize() < total || mean.GetSize() < A || var.GetSize() < A ||
      rstd.GetSize() < A || (!config.isNoGamma && gamma.GetSize() < R) || (!config.isNoBeta && beta.GetSize() < R))
    fail("api-argument", api, loc,
         strf("[A, R] = [%u, %u (padded %u)], but inputX holds %u, output %u (need A x padded R), inputMean %u, "
              "inputVariance %u, outputRstd %u (need A), gamma %u and beta %u (need R)", A, R, W, x.GetSize(),
              out.GetSize(), mean.GetSize(), var.GetSize(), rstd.GetSize(), gamma.GetSize(), beta.GetSize()));
  if (tmp && tmp->GetSize() < normalize_min_tmp(A, W, sizeof(U)))
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetNormalizeMaxMinTmpSize gives as the minimum for "
              "[A = %u, R = %u]", tmp->GetSize(), normalize_min_tmp(A, W, sizeof(U)), A, W));
  ApiCall c(Pipe::V, api, loc);
  c.src(x, total, "inputX").src(mean, A, "inputMean").src(var, A, "inputVariance");
  c.dst(out, total, "output").dst(rstd, A, "outputRstd");
  int k = 5;
  const int kg = config.isNoGamma ? -1 : k++;
  if (!config.isNoGamma) c.src(gamma, R, "gamma");
  const int kb = config.isNoBeta ? -1 : k++;
  if (!config.isNoBeta) c.src(beta, R, "beta");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad_row, bad_var;
  if (c.commit(Flow::Manual)) {
    bool gb = false;
    for (int which : {kg, kb})
      for (uint32_t r = 0; which >= 0 && r < R && !gb; ++r) gb = ApiCall::lane_poisoned(c.operand(which), r);
    bad_row.assign(A, gb);
    bad_var.assign(A, 0);
    for (uint32_t a = 0; a < A; ++a) {
      bad_var[a] = ApiCall::lane_poisoned(c.operand(2), a);
      bad_row[a] = bad_row[a] || bad_var[a] || ApiCall::lane_poisoned(c.operand(1), a);
      for (uint32_t r = 0; r < R && !bad_row[a]; ++r)
        bad_row[a] = ApiCall::lane_poisoned(c.operand(0), uint64_t(a) * W + r);
    }
  }
  ctx().stats.vector_elems += total;
  std::vector<float> g(R, 1.0f), b(R, 0.0f), rs(A);
  for (uint32_t r = 0; r < R; ++r) {
    if (!config.isNoGamma) g[r] = to_f(gamma.data()[r]);
    if (!config.isNoBeta) b[r] = to_f(beta.data()[r]);
  }
  for (uint32_t a = 0; a < A; ++a) rs[a] = 1.0f / hm::sqrt(var.data()[a] + eps);
  for (uint32_t a = 0; a < A; ++a) {
    const T* xr = x.data() + uint64_t(a) * W;
    T* yr = out.data() + uint64_t(a) * W;
    const float m = mean.data()[a];
    for (uint32_t r = 0; r < R; ++r) {
      float y = (to_f(xr[r]) - m) * rs[a];
      if (!config.isNoGamma) y = y * g[r];
      if (!config.isNoBeta) y = y + b[r];
      // a float output leaves through Adds(y, 0) (normalize_common_impl.h:223-225): -0 becomes +0
      if constexpr (std::is_same<T, float>::value) y = y + 0.0f;
      yr[r] = from_f<T>(y);
    }
  }
  for (uint32_t a = 0; a < A; ++a) rstd.data()[a] = rs[a];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t a = 0; a < A; ++a) {
    const uint32_t off = static_cast<uint32_t>(uint64_t(a) * W * sizeof(T));
    shadow_fill(out.m_.ub_off() + off, static_cast<uint32_t>(R * sizeof(T)), bad_row.empty() || !bad_row[a]);
    if (R < W)  // the padding columns: not defined on the device
      shadow_fill(out.m_.ub_off() + off + static_cast<uint32_t>(R * sizeof(T)),
                  static_cast<uint32_t>((W - R) * sizeof(T)), false);
    shadow_fill(rstd.m_.ub_off() + a * 4, 4, bad_var.empty() || !bad_var[a]);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd, const LocalTensor<float>& inputMean,
               const LocalTensor<float>& inputVariance, const LocalTensor<T>& inputX, const LocalTensor<U>& gamma,
               const LocalTensor<U>& beta, const LocalTensor<uint8_t>& sharedTmpBuffer, const float epsilon,
               const NormalizePara& para, OPKIT_LOC) {
  ::opkit_emu::adv_normalize<U, T, config>(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta,
                                           &sharedTmpBuffer, epsilon, para, loc);
}
template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd, const LocalTensor<float>& inputMean,
               const LocalTensor<float>& inputVariance, const LocalTensor<T>& inputX, const LocalTensor<U>& gamma,
               const LocalTensor<U>& beta, const float epsilon, const NormalizePara& para, OPKIT_LOC) {
  ::opkit_emu::adv_normalize<U, T, config>(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta, nullptr,
                                           epsilon, para, loc);
}
}  // namespace AscendC
