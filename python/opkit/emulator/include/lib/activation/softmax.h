// CANN's lib/activation/softmax.h (asc-devkit 82b89a15 include/adv_api/activation/softmax.h): SoftMax itself is in
// opkit_emu/adv_softmax.h (kernel_operator.h includes it); this header adds AdjustSoftMaxRes (softmax.h:248-275, page
// docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/AdjustSoftMaxRes.md):
//   template <typename T1, typename T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
//   bool AdjustSoftMaxRes(softMaxRes, maxTensor, const uint32_t from, const T1 to, const SoftMaxShapeInfo&)
// As the A2 code does (impl/adv_api/detail/activation/softmax/membase/common/softmax_common_impl.h:66-124, ND): for
// each of srcM rows it reads the row's max at element j x 8 (float) or j x 16 (half) of maxTensor -- j with
// stepSizeMode != 0 -- and when its bits equal `from` (the low 16 bits for half) writes `to` over the row's srcK
// elements of softMaxRes (all srcK, padding included); returns whether any row matched. Bitwise: no arithmetic.
// Checked: tensors too small for [srcM, srcK] (api-argument). Not: the NZ format (a compile error naming it).
// Poison: a row whose max element is poison is poison in softMaxRes; a rewritten row is defined.
#pragma once
#include <cstring>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_softmax.h"

namespace opkit_emu {
template <class T1, class T2, uint8_t stepSizeMode>
bool adjust_softmax_res(const AscendC::LocalTensor<T1>& res, const AscendC::LocalTensor<T2>& max, uint32_t from,
                        T1 to, const AscendC::SoftMaxShapeInfo& s, SrcLoc loc) {
  static_assert((std::is_same<T1, half>::value || std::is_same<T1, float>::value) &&
                    (std::is_same<T2, half>::value || std::is_same<T2, float>::value),
                "opkit emulator: AdjustSoftMaxRes supports half and float (AdjustSoftMaxRes.md)");
  const char* api = "AdjustSoftMaxRes";
  const uint32_t M = s.srcM, K = s.srcK;
  const uint32_t step = stepSizeMode ? 1 : kBlk / sizeof(T2);
  const uint64_t n = uint64_t(M) * K, nmax = M ? uint64_t(M - 1) * step + 1 : 0;
  if (res.GetSize() < n || max.GetSize() < nmax)
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but softMaxRes holds %u (need %llu), maxTensor %u (need %llu)", M, K,
              res.GetSize(), static_cast<unsigned long long>(n), max.GetSize(),
              static_cast<unsigned long long>(nmax)));
  ApiCall c(Pipe::V, api, loc);
  c.src(max, nmax, "maxTensor").dst(res, n, "softMaxRes");
  const bool any_bad = c.commit(Flow::Manual);
  ctx().stats.vector_elems += n;
  bool hit = false;
  for (uint32_t r = 0; r < M; ++r) {
    const T2 v = max.data()[uint64_t(r) * step];
    bool match;
    if constexpr (sizeof(T2) == 4) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      match = bits == from;
    } else {
      uint16_t bits;
      std::memcpy(&bits, &v, 2);
      match = bits == static_cast<uint16_t>(from);
    }
    const bool bad = any_bad && ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * step);
    if (match) {
      hit = true;
      T1* y = res.data() + uint64_t(r) * K;
      for (uint32_t k = 0; k < K; ++k) y[k] = to;
    }
    if (match || bad)
      shadow_fill(res.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * sizeof(T1)), K * sizeof(T1), !bad);
  }
  return hit;
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T1, typename T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
bool AdjustSoftMaxRes(const LocalTensor<T1>& softMaxRes, const LocalTensor<T2>& maxTensor, const uint32_t from,
                      const T1 to, const SoftMaxShapeInfo& softmaxShapeInfo, OPKIT_LOC) {
  static_assert(!isDataFormatNZ, "not supported on the emulator: AdjustSoftMaxRes with isDataFormatNZ");
  return ::opkit_emu::adjust_softmax_res<T1, T2, stepSizeMode>(softMaxRes, maxTensor, from, to, softmaxShapeInfo,
                                                               loc);
}
}  // namespace AscendC
