// CANN's lib/normalization/rmsnorm.h (asc-devkit 82b89a15 include/adv_api/normalization/rmsnorm.h; RmsNormTiling
// include/adv_api/normalization/rmsnorm_tilingdata.h:16-29, declared in opkit_emu/adv_tiling_vector.h, which reaches
// a kernel with its tiling header -- the API takes the tiling as a deduced type so that kernel_operator.h does not put
// every tiling struct in the global scope, where a kernel's own PadTiling would clash; page
// docs/zh/api/SIMD-API/高阶API/归一化操作/RmsNorm.md): RmsNorm of a [B, S, H] ND tensor over H, half and float:
//   template <typename T, bool isBasicBlock = false>
//   RmsNorm(dst, src, gamma[, sharedTmpBuffer], const T epsilon, const RmsNormTiling& tiling)
// dst[r][h] = src[r][h] x rstd_r x gamma[h], rstd_r = (sum_{h < originalHLength} src[r][h]^2 x
// tiling.reciprocalOfHLength + epsilon)^-0.5, in float (half: cast to float first, the result cast back), as the A2
// implementation computes it (impl/adv_api/detail/normalization/rmsnorm/rmsnorm_common_impl.h: reduced in float over
// originalHLength with RepeatReduceSum, :56-72; the reciprocal of H from the tiling, not recomputed). The row sum is
// the count-form ReduceSum tree here (CANN's is a chain of RepeatReduceSum levels): equal within float rounding,
// never claimed bitwise. Checked: the tiling filled (mainBsLength > 0, else GetRmsNormTilingInfo was not run),
// hLength x sizeof(T) a multiple of 32, 0 < originalHLength <= hLength, src / dst holding B x S x H and gamma H
// (api-argument; rmsnorm_tiling_impl.cpp RmsNormCheckShape); a sharedTmpBuffer below GetRmsNormMaxMinTmpSize's
// minimum, (H x (half ? 2 : 1) + 8) x 4 bytes, or below the layout the tiling asks of it (mainBsLengthAlign +
// mainBshLength x (half ? 2 : 1) floats, GetRmsNormInfo :44-53), is tensor-bounds. Poison: a row is poison in dst
// when one of its reduced lanes is.
#pragma once
#include "opkit_emu/host_math.h"
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_tiling_rmsnorm.h"

using AscendC::tiling::RmsNormTiling;  // global, as CANN's kernel_operator.h gives it (adv_tiling_rmsnorm.h)

namespace opkit_emu {
template <class T, class Tiling>
void adv_rmsnorm(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                 const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<uint8_t>* tmp, T eps,
                 const Tiling& t, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: RmsNorm supports half and float");
  const char* api = "RmsNorm";
  if (t.mainBsLength == 0)
    fail("api-argument", api, loc, "tiling.mainBsLength is 0: the RmsNormTiling was not filled (GetRmsNormTilingInfo)");
  const uint32_t H = t.hLength, oriH = t.originalHLength;
  if (H == 0 || H * sizeof(T) % kBlk || oriH == 0 || oriH > H)
    fail("api-argument", api, loc,
         strf("tiling hLength %u (x sizeof(T) must be a multiple of 32), originalHLength %u (must be in (0, hLength])",
              H, oriH));
  const uint64_t rows = uint64_t(t.bLength) * t.sLength, total = rows * H;
  if (rows == 0 || src.GetSize() < total || dst.GetSize() < total || gamma.GetSize() < H)
    fail("api-argument", api, loc,
         strf("B x S x H = %u x %u x %u, but srcLocal holds %u, dstLocal %u elements and gammaLocal %u (needs H)",
              t.bLength, t.sLength, H, src.GetSize(), dst.GetSize(), gamma.GetSize()));
  if (tmp) {
    const uint32_t coeff = sizeof(T) == 2 ? 2 : 1;
    const uint32_t host_min = (H * coeff + 8) * 4, layout = (t.mainBsLengthAlign + t.mainBshLength * coeff) * 4;
    if (tmp->GetSize() < host_min || tmp->GetSize() < layout)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetRmsNormMaxMinTmpSize gives as the minimum for "
                "H %u, or the %u bytes the tiling's rounds (mainBsLengthAlign %u + mainBshLength %u floats%s) use",
                tmp->GetSize(), host_min, H, layout, t.mainBsLengthAlign, t.mainBshLength, coeff == 2 ? " x 2" : ""));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, total, "dstLocal").src(src, total, "srcLocal").src(gamma, H, "gammaLocal");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(rows, 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint32_t h = 0; h < oriH && !bad[r]; ++h)
        bad[r] = ApiCall::lane_poisoned(c.operand(1), r * H + h) || ApiCall::lane_poisoned(c.operand(2), h);
  }
  ctx().stats.vector_elems += total;
  std::vector<float> g(H), sq(H);
  for (uint32_t h = 0; h < H; ++h) g[h] = to_f(gamma.data()[h]);
  std::vector<T> res(total);
  const float e = to_f(eps);
  for (uint64_t r = 0; r < rows; ++r) {
    const T* x = src.data() + r * H;
    for (uint32_t h = 0; h < H; ++h) sq[h] = to_f(x[h]) * to_f(x[h]);
    const float mean = reduce_sum_loop<float>(sq.data(), oriH) * t.reciprocalOfHLength;
    const float rstd = ::opkit_emu::hm::pow(mean + e, -0.5f);
    for (uint32_t h = 0; h < H; ++h) res[r * H + h] = from_f<T>(to_f(x[h]) * rstd * g[h]);
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < total; ++k) d[k] = res[k];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t r = 0; r < rows; ++r)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(r * H * sizeof(T)), static_cast<uint32_t>(H * sizeof(T)),
                bad.empty() || !bad[r]);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isBasicBlock = false, class RmsNormTilingT>
void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, const RmsNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_rmsnorm<T>(dstLocal, srcLocal, gammaLocal, &sharedTmpBuffer, epsilon, tiling, loc);
}
template <typename T, bool isBasicBlock = false, class RmsNormTilingT>
void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
             const T epsilon, const RmsNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_rmsnorm<T>(dstLocal, srcLocal, gammaLocal, nullptr, epsilon, tiling, loc);
}
}  // namespace AscendC
