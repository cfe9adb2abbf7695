// CANN's lib/math/cumsum.h (asc-devkit 82b89a15 include/adv_api/math/cumsum.h:44-95, CumSumConfig / CumSumInfo in
// include/adv_api/math/cumsum_utils.h:27-39; page docs/zh/api/SIMD-API/高阶API/数学计算/CumSum接口/CumSum.md):
// the running sum of an [outter, inner] ND tensor along its last axis (each row) or its first axis (down each
// column), half and float, with and without sharedTmpBuffer:
//   template <typename T, const CumSumConfig& config = defaultCumSumConfig>
//   CumSum(LocalTensor<T>& dst, LocalTensor<T>& lastRow, const LocalTensor<T>& src[, LocalTensor<uint8_t>& tmp],
//          const CumSumInfo& {outter, inner})
// Precision as the A2 implementation computes it (impl/adv_api/detail/math/cumsum/cumsum_common_impl.h): the
// additions run in order, one row/column step after another, in float (half: cast to float first, each output
// cast back to half, :103-120 and :335-356); float adds float directly (:238-244, :359-370). outputLastRow copies
// the last row of dst into lastRow (:426-435). Checked as CANN's CPU-debug check does (cumsum_check_common.h:51-90):
// outter and inner > 0, inner x sizeof(T) a multiple of 32, src / dst holding outter x inner, lastRow holding inner
// when outputLastRow (api-argument); a sharedTmpBuffer below GetCumSumMaxMinTmpSize's minimum
// (impl/adv_api/tiling/math/cumsum_tiling.cpp:34-59: last axis 16 x inner x sizeof(T) x 2, plus 16 x inner x 2 for
// half; first axis outter x inner x 4 for half, 0 for float) is tensor-bounds. Poison: an output is poison when one
// of the inputs summed into it is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
  bool isLastAxis{true};
  bool isReuseSource{false};
  bool outputLastRow{false};
  CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
struct CumSumInfo {
  uint32_t outter{0};
  uint32_t inner{0};  // 32-byte aligned
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, true};
}  // namespace AscendC

namespace opkit_emu {
// GetCumSumMaxMinTmpSize's minimum (cumsum_tiling.cpp:34-59)
inline uint32_t cumsum_min_tmp(uint32_t outter, uint32_t inner, uint32_t size, bool last_axis) {
  if (!last_axis) return size == 2 ? outter * inner * 4 : 0;
  return (size == 2 ? inner * 16 * 2 : 0) + 16 * inner * size * 2;
}

template <class T>
void adv_cumsum(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& last,
                const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp,
                const AscendC::CumSumInfo& info, bool last_axis, bool out_last, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: CumSum supports half and float");
  const char* api = "CumSum";
  const uint32_t O = info.outter, I = info.inner;
  if (O == 0 || I == 0) fail("api-argument", api, loc, strf("cumSumInfo outter %u, inner %u: both must be > 0", O, I));
  if (I * sizeof(T) % kBlk)
    fail("api-argument", api, loc,
         strf("cumSumInfo.inner %u x sizeof(T) %zu = %zu bytes is not a multiple of 32 (CumSum.md: inner is 32-byte "
              "aligned)", I, sizeof(T), I * sizeof(T)));
  const uint64_t total = uint64_t(O) * I;
  if (src.GetSize() < total || dst.GetSize() < total)
    fail("api-argument", api, loc,
         strf("outter x inner = %llu elements, but srcTensor holds %u and dstTensor %u",
              static_cast<unsigned long long>(total), src.GetSize(), dst.GetSize()));
  if (out_last && last.GetSize() < I)
    fail("api-argument", api, loc,
         strf("config.outputLastRow: lastRowTensor holds %u elements, below inner %u", last.GetSize(), I));
  if (tmp) {
    const uint32_t need = cumsum_min_tmp(O, I, sizeof(T), last_axis);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetCumSumMaxMinTmpSize gives for [%u, %u] (%s)",
                tmp->GetSize(), need, O, I, last_axis ? "isLastAxis" : "first axis"));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, total, "dstTensor").src(src, total, "srcTensor");
  if (out_last) c.dst(last, I, "lastRowTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // read before dst (which may be src) is written
    bad.assign(total, 0);
    for (uint64_t k = 0; k < total; ++k) bad[k] = ApiCall::lane_poisoned(c.operand(1), k);
  }
  ctx().stats.vector_elems += total;
  // the running sums, in float, in the order the device adds them
  std::vector<T> res(total);
  std::vector<uint8_t> rbad(bad.empty() ? 0 : total, 0);
  const T* s = src.data();
  for (uint32_t a = 0; a < (last_axis ? O : I); ++a) {
    float acc = 0.0f;
    uint8_t b = 0;
    for (uint32_t k = 0; k < (last_axis ? I : O); ++k) {
      const uint64_t at = last_axis ? uint64_t(a) * I + k : uint64_t(k) * I + a;
      acc = k ? acc + to_f(s[at]) : to_f(s[at]);
      res[at] = from_f<T>(acc);
      if (!bad.empty()) rbad[at] = b = b | bad[at];
    }
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < total; ++k) d[k] = res[k];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t k = 0; k < total; ++k)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(k * sizeof(T)), sizeof(T), rbad.empty() || !rbad[k]);
  if (out_last) {
    const uint64_t base = uint64_t(O - 1) * I;
    for (uint32_t k = 0; k < I; ++k) {
      last.data()[k] = res[base + k];
      shadow_fill(last.m_.ub_off() + static_cast<uint32_t>(k * sizeof(T)), sizeof(T),
                  rbad.empty() || !rbad[base + k]);
    }
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
            LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo, OPKIT_LOC) {
  ::opkit_emu::adv_cumsum<T>(dstTensor, lastRowTensor, srcTensor, &sharedTmpBuffer, cumSumInfo, config.isLastAxis,
                             config.outputLastRow, loc);
}
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
            const CumSumInfo& cumSumInfo, OPKIT_LOC) {
  ::opkit_emu::adv_cumsum<T>(dstTensor, lastRowTensor, srcTensor, nullptr, cumSumInfo, config.isLastAxis,
                             config.outputLastRow, loc);
}
}  // namespace AscendC
