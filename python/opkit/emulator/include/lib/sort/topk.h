// CANN's lib/sort/topk.h (asc-devkit 82b89a15 include/adv_api/sort/topk.h; page docs/zh/api/SIMD-API/高阶API/排序操作/
// TopK.md): TopK of the last axis of [outter, inner] half / float tensors, the A2 forms (topk.h:290-370, no TopKConfig):
//   template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
//             TopKMode topkMode = TopKMode::TOPK_NORMAL>
//   TopK(dstValueLocal, dstIndexLocal (int32_t), srcLocal, srcIndexLocal (int32_t), finishLocal (bool)[, tmpLocal
//        (uint8_t)], k, TopkTiling, TopKInfo{outter, inner, n}, isLargest = true)
// What the A2 code gives (impl/adv_api/detail/sort/topk/topk_common_impl.h, topk_v220_impl.h), modelled here:
//  - Every row sorts all `inner` elements, not only the first n (lanes n..inner take part as they are; the page
//    asks the caller to fill them), by Sort32 then MrgSort (descending, stable: Sort32 keeps equal scores in input
//    order and MrgSort gives a tie to the earlier queue), so equal values come out lowest index first. isLargest
//    false sorts -x the same way (TmpLocalSort32 :170-178), so the k smallest come ascending, ties lowest index first.
//  - Indexes: isInitIndex ? srcIndexLocal : 0, 1, ... . Normal mode reads srcIndexLocal[0, inner) for every row
//    (TmpLocalSort32 passes it unoffset, :179-190); small mode reads srcIndexLocal[row x 32 + i].
//  - Layout: normal mode row j writes k values at dstValueLocal[j x kAlign] (kAlign: k rounded up to 8 for float,
//    16 for half) and k indexes at dstIndexLocal[j x kAlignFourBytes] (k rounded up to 8) (TopKCompute :207-236,
//    GatherDstValAndDstIdx :118-150); small mode packs them, row j at [j x k] (GatherMask over all rows, :250-320).
//  - isLargest false: the final Muls by -1 runs over tiling.maskOffset elements of dstValueLocal (topk_common_impl.h
//    :68-72), so in normal mode the pad lanes between k and kAlign of each row are negated too, as here.
//  - isHasfinish (normal mode): a row whose finishLocal[j] is true gets its k indexes set to n (:226-234); small
//    mode ignores the flag (the page: "In small mode, isHasfinish can only be set to false"): api-argument here.
// Checked (TopkInputCheck, topk_v220_impl.h:35-60, and the page): 1 <= k <= n, 1 <= n <= inner, inner a multiple of
// 32, at most 4096 in normal mode and exactly 32 in small mode, the tensors large enough (api-argument); tmpLocal
// below GetTopKMaxMinTmpSize's A2 minimum (topk_tiling_impl.cpp:164-208: normal 16 x inner bytes, + 4 x inner without
// isInitIndex; small 8 x inner x outter + 64, + 4 x inner x outter without isInitIndex, + 4 x inner x outter when
// isLargest is false) is tensor-bounds. The form without tmpLocal takes CANN's stack buffer, which the emulator does
// not model. Poison: a row's outputs are poison when one of its src lanes (its index lanes with isInitIndex, its
// finish flag with isHasfinish) is.
#pragma once
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
// TopkTiling comes from kernel_tiling/kernel_tiling.h, as in CANN; the tiling parameter is a template so that
// kernel_operator.h need not export the struct's global name (a kernel may declare its own).

namespace AscendC {
#ifndef OPKIT_TOPK_MODE_DEFINED
#define OPKIT_TOPK_MODE_DEFINED
enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };  // include/adv_api/sort/topk_utils_constants.h
#endif
enum class TopKAlgo { RADIX_SELECT, MERGE_SORT };
enum class TopKOrder { UNSET, LARGEST, SMALLEST };
struct TopKConfig {  // the Ascend 950 forms' template argument; A2's TopK takes none
  TopKAlgo algo = TopKAlgo::MERGE_SORT;
  TopKOrder order = TopKOrder::UNSET;
  bool sorted = true;
};
struct TopKInfo {  // include/adv_api/sort/topk_utils.h
  int32_t outter = 1;
  int32_t inner;  // n rounded up to 32
  int32_t n;      // the row's real length
};
}  // namespace AscendC

namespace opkit_emu {
// GetTopKMaxMinTmpSize's A2 minimum in bytes (topk_tiling_impl.cpp:164-208)
inline uint64_t topk_min_tmp(bool small, uint64_t inner, uint64_t outter, bool initIndex, bool largest) {
  if (!small) return (initIndex ? 16u : 20u) * inner;
  const uint64_t all = inner * outter;
  return all * 8 + 64 + (largest ? 0 : all * 4) + (initIndex ? 0 : all * 4);
}

template <class T, bool initIndex, bool hasFinish, AscendC::TopKMode mode>
void adv_topk(const AscendC::LocalTensor<T>& dv, const AscendC::LocalTensor<int32_t>& di,
              const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<int32_t>& sidx,
              const AscendC::LocalTensor<bool>& fin, const AscendC::LocalTensor<uint8_t>* tmp, int32_t k,
              const AscendC::TopKInfo& info, bool largest, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: TopK supports half and float (TopK.md, A2)");
  constexpr bool small = mode == AscendC::TopKMode::TOPK_NSMALL;
  const char* api = "TopK";
  const int32_t outter = info.outter, inner = info.inner, n = info.n;
  if (small && hasFinish)  // a runtime check: kernels instantiate both modes and pick one at run time
    fail("api-argument", api, loc,
         "isHasfinish true in TOPK_NSMALL mode (TopK.md: \"In small mode, isHasfinish can only be set to false\"; "
         "the A2 code would ignore the finish flags)");
  if (outter < 1 || inner < 32 || inner % 32 || (!small && inner > 4096) || (small && inner != 32))
    fail("api-argument", api, loc,
         strf("TopKInfo outter %d, inner %d: outter must be >= 1 and inner a multiple of 32, %s", outter, inner,
              small ? "exactly 32 in TOPK_NSMALL mode" : "at most 4096 in TOPK_NORMAL mode"));
  if (n < 1 || n > inner)
    fail("api-argument", api, loc, strf("TopKInfo n %d is outside [1, inner = %d]", n, inner));
  if (k < 1 || k > n) fail("api-argument", api, loc, strf("k %d is outside [1, n = %d]", k, n));
  const uint32_t kv = small ? uint32_t(k) : uint32_t((k + (sizeof(T) == 4 ? 7 : 15)) / (sizeof(T) == 4 ? 8 : 16) *
                                                         (sizeof(T) == 4 ? 8 : 16));
  const uint32_t ki = small ? uint32_t(k) : uint32_t((k + 7) / 8 * 8);
  const uint64_t all = uint64_t(outter) * inner, nv = uint64_t(outter) * kv, ni = uint64_t(outter) * ki;
  // whole padded rows, as CANN's check asks (api_check/.../topk/topk_check_common.h:87-103): the A2 code writes them
  const uint64_t nidx = small ? all : uint64_t(inner);
  if (src.GetSize() < all || dv.GetSize() < nv || di.GetSize() < ni || (initIndex && sidx.GetSize() < nidx) ||
      (hasFinish && fin.GetSize() < uint32_t(outter)))
    fail("api-argument", api, loc,
         strf("outter %d x inner %d, k %d: srcLocal holds %u (needs %llu), dstValueLocal %u (needs %llu), "
              "dstIndexLocal %u (needs %llu)%s", outter, inner, k, src.GetSize(), static_cast<unsigned long long>(all),
              dv.GetSize(), static_cast<unsigned long long>(nv), di.GetSize(), static_cast<unsigned long long>(ni),
              initIndex ? strf(", srcIndexLocal %u (needs %llu)", sidx.GetSize(),
                               static_cast<unsigned long long>(nidx)).c_str() : ""));
  if (tmp) {
    const uint64_t need = topk_min_tmp(small, uint64_t(inner), uint64_t(outter), initIndex, largest);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("tmpLocal holds %u bytes, below the %llu bytes GetTopKMaxMinTmpSize gives as the minimum for outter "
                "%d, inner %d (%s, isInitIndex %d, isLargest %d)", tmp->GetSize(),
                static_cast<unsigned long long>(need), outter, inner, small ? "TOPK_NSMALL" : "TOPK_NORMAL",
                int(initIndex), int(largest)));
  }
  // the span the negation reaches when !largest (tiling.maskOffset elements)
  ApiCall c(Pipe::V, api, loc);
  c.dst(dv, nv, "dstValueLocal").dst(di, ni, "dstIndexLocal");
  c.src(src, all, "srcLocal");
  int op_idx = -1, op_fin = -1, nops = 3;
  if (initIndex) c.src(sidx, nidx, "srcIndexLocal"), op_idx = nops++;
  if (hasFinish) c.src(fin, uint64_t(outter), "finishLocal"), op_fin = nops++;
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "tmpLocal");
  const bool poisoned = c.commit(Flow::Manual);
  std::vector<uint8_t> bad(outter, 0);
  if (poisoned)
    for (int32_t j = 0; j < outter; ++j) {
      for (int32_t i = 0; i < inner && !bad[j]; ++i) {
        bad[j] = ApiCall::lane_poisoned(c.operand(2), uint64_t(j) * inner + i);
        if (op_idx >= 0 && !bad[j]) bad[j] = ApiCall::lane_poisoned(c.operand(op_idx), small ? uint64_t(j) * inner + i : i);
      }
      if (op_fin >= 0 && !bad[j]) bad[j] = ApiCall::lane_poisoned(c.operand(op_fin), j);
    }
  std::vector<int32_t> order(inner);
  std::vector<float> score(inner);
  for (int32_t j = 0; j < outter; ++j) {
    const T* row = src.data() + uint64_t(j) * inner;
    for (int32_t i = 0; i < inner; ++i) score[i] = largest ? to_f(row[i]) : -to_f(row[i]);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return score[a] > score[b]; });
    const bool done = hasFinish && fin.data()[j];
    T* vr = dv.data() + uint64_t(j) * kv;
    int32_t* ir = di.data() + uint64_t(j) * ki;
    for (int32_t i = 0; i < k; ++i) {
      const int32_t p = order[i];
      vr[i] = row[p];  // -(-x) is x exactly
      ir[i] = done ? n : initIndex ? sidx.data()[small ? uint64_t(j) * inner + p : uint64_t(p)] : p;
    }
    if (!largest && !small)
      for (uint32_t i = uint32_t(k); i < kv; ++i) vr[i] = from_f<T>(-to_f(vr[i]));
    shadow_fill(dv.m_.ub_off() + static_cast<uint32_t>(uint64_t(j) * kv * sizeof(T)), uint32_t(k) * sizeof(T), !bad[j]);
    shadow_fill(di.m_.ub_off() + static_cast<uint32_t>(uint64_t(j) * ki * 4), uint32_t(k) * 4, !bad[j]);
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  sort_stats(all, uint64_t(outter) * (inner / 32));
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          enum TopKMode topkMode = TopKMode::TOPK_NORMAL, class TopkTilingT>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal, const LocalTensor<T>& srcLocal,
          const LocalTensor<int32_t>& srcIndexLocal, const LocalTensor<bool>& finishLocal,
          const LocalTensor<uint8_t>& tmpLocal, const int32_t k, const TopkTilingT& tilling, const TopKInfo& topKInfo,
          const bool isLargest = true, OPKIT_LOC) {
  (void)tilling;  // the emulator sorts directly; the tiling only sizes CANN's work buffer
  ::opkit_emu::adv_topk<T, isInitIndex, isHasfinish, topkMode>(dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal,
                                                               finishLocal, &tmpLocal, k, topKInfo, isLargest, loc);
}
template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          enum TopKMode topkMode = TopKMode::TOPK_NORMAL, class TopkTilingT>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal, const LocalTensor<T>& srcLocal,
          const LocalTensor<int32_t>& srcIndexLocal, const LocalTensor<bool>& finishLocal, const int32_t k,
          const TopkTilingT& tilling, const TopKInfo& topKInfo, const bool isLargest = true, OPKIT_LOC) {
  (void)tilling;
  ::opkit_emu::adv_topk<T, isInitIndex, isHasfinish, topkMode>(dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal,
                                                               finishLocal, nullptr, k, topKInfo, isLargest, loc);
}
}  // namespace AscendC
