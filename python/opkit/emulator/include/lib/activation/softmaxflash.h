// CANN's lib/activation/softmaxflash.h (asc-devkit 82b89a15 include/adv_api/activation/softmaxflash.h; page
// docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxFlash.md -- deprecated for SoftmaxFlashV2, still on A2):
// the online-softmax step of an ND [srcM, srcK] tensor, all tensors of T (half / float), or a half source / dst /
// expMax with float sums and maxima, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
//   SoftmaxFlash(dst, sum, max, src, expMax, inSum, inMax[, sharedTmpBuffer], tiling, bool isUpdate = false,
//                shapeInfo = {})
// isUpdate false: SoftMax itself (softmax_common_flash.h:54-56, 63-65: SoftMaxNDImpl), dst = exp(x - m) / s, sum /
// max written, expMax untouched. isUpdate true, per row in float as the A2 code computes it
// (impl/adv_api/detail/activation/softmax/softmax_flash_base_impl/softmax_flash_nd_process_impl.h:29-165 (half),
// 167-285 (float), 324-470 (half with float sums); half cast in, each output rounded once with the family's
// CAST_ROUND): m = max of the row over the first oriSrcK columns, e = exp(x - m), s = sum of e over oriSrcK,
// M = max(inMax, m), a = exp(m - M), b = exp(inMax - M) x inSum, newSum = b + a x s, expMax = b / newSum,
// dst = e x (a / newSum) over all srcK columns; max = M, sum = newSum. So expMax is the factor that rescales the
// previous chunk's dst, unlike SoftmaxFlashV2's exp(inMax - M). max / sum / expMax are the row's value over one
// 32-byte block of their type; inMax / inSum: each row's block must hold one value (the page), since A2 computes
// lane by lane -- a block whose lanes differ is api-argument, any poisoned lane poisons the row. The sum as
// SoftMax's here (count-form ReduceSum): equal within float rounding, not bitwise; the basic-block code
// (softmax_flash_basic_block_impl.h) is the same arithmetic in another order.
// The tiling: CANN re-tiles on the device when its srcM / srcK differ from the shape (softmax_common_flash.h:50-86,
// 109-145: SoftMaxFlashTilingFunc on the work buffer it has), so such a tiling (a zero one too) gives the same rows
// when the sharedTmpBuffer holds one row of that re-tiling (2 blk + 2 srcK floats, 4 blk + 2 srcK with isUpdate:
// below that the device's assert fails, tensor-bounds here; the stack-buffer forms are not checked); a tiling made for this shape is used as given, its rounds and work-buffer layout
// (softmax_flash_nd_process_impl.h:173-188, 192-285, 331-338) -- so it is checked: not of SoftMaxFlashTilingFunc's
// form (splitK = srcK, reduceK = 32 / sizeof(sum type), the sizes splitM / tailM times those, rangeM x splitM +
// tailM = srcM) is api-argument; with isUpdate and a sharedTmpBuffer the kernel uses, one holding fewer than
// 2 splitSize + 4 reduceSize floats (a tiling made for a bigger localWorkSpaceSize) is tensor-bounds. The layout of
// the no-update form (SoftMaxNDImpl) is not checked. isReuseSource: reserved (the page), no effect.
// Checked as SoftmaxFlashV2: an empty SoftMaxShapeInfo, srcK x sizeof(T) not a multiple of 32, oriSrcK beyond srcK,
// tensors too small are api-argument; a sharedTmpBuffer below GetSoftMaxFlashMinTmpSize's minimum (the A2 branch of
// impl/adv_api/tiling/activation/softmax_tiling.cpp:265-305, floats: blk + srcK + 64 without update, 4 blk + 2 srcK
// with, blk = 32 / sizeof(sum type)) is tensor-bounds -- except all-half with isUpdate, where A2 ignores the
// sharedTmpBuffer and pops the stack buffer (softmax_flash_nd_process_impl.h:296-303 calling :30-36), so its size is
// not checked (the device's stack buffer must hold the layout; the emulator does not model its size).
// Poison: a row is poison in every output when one of its reduced lanes (or, updating, any lane of its inMax /
// inSum block) is.
#pragma once
#include <cstring>
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_softmax.h"

namespace opkit_emu {
// GetSoftMaxFlashMinTmpSize (A2 branch, softmax_tiling.cpp:265-305), bytes; size2: the sum / max type
inline uint32_t softmax_flash_min_tmp(uint32_t k, uint32_t size2, bool update) {
  const uint32_t blk = kBlk / size2;
  return 4 * (update ? blk * 4 + k * 2 : blk + k + 64);
}

// T: source / dst / expMax; U: sum / max / inSum / inMax
template <class T, class U, bool basic, class Tiling>
void adv_softmax_flash(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& sum,
                       const AscendC::LocalTensor<U>& max, const AscendC::LocalTensor<T>& src,
                       const AscendC::LocalTensor<T>& emax, const AscendC::LocalTensor<U>& in_sum,
                       const AscendC::LocalTensor<U>& in_max, const AscendC::LocalTensor<uint8_t>* tmp,
                       const Tiling& t, bool update, const AscendC::SoftMaxShapeInfo& s, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: SoftmaxFlash supports half and float (SoftmaxFlash.md, A2)");
  const char* api = "SoftmaxFlash";
  softmax_shape_checks<T>(api, s, loc);
  const uint32_t M = s.srcM, K = s.srcK, oriK = s.oriSrcK == 0 ? K : s.oriSrcK;
  const uint32_t bu = kBlk / sizeof(U), bt = kBlk / sizeof(T);
  const uint64_t n = uint64_t(M) * K, nu = uint64_t(M) * bu, nt = uint64_t(M) * bt;
  if (src.GetSize() < n || dst.GetSize() < n || sum.GetSize() < nu || max.GetSize() < nu ||
      (update && (emax.GetSize() < nt || in_sum.GetSize() < nu || in_max.GetSize() < nu)))
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but src holds %u, dst %u (need %llu), sum %u, max %u%s (need %llu), "
              "expMax %u (need %llu)", M, K, src.GetSize(), dst.GetSize(), static_cast<unsigned long long>(n),
              sum.GetSize(), max.GetSize(), update ? ", inSum / inMax" : "", static_cast<unsigned long long>(nu),
              emax.GetSize(), static_cast<unsigned long long>(nt)));
  // all-half with isUpdate runs on the stack buffer, not sharedTmpBuffer (softmax_flash_nd_process_impl.h:296-303)
  const bool on_stack = update && sizeof(T) == 2 && sizeof(U) == 2;
  if (t.srcM == M && t.srcK == K) {  // used as given (otherwise CANN re-tiles, softmax_common_flash.h:50-86)
    const uint32_t rk = kBlk / sizeof(U);
    if (t.splitM == 0)
      fail("api-argument", api, loc,
           "the tiling is for this shape but has splitM 0: SoftMaxFlashTilingFunc makes that for a localWorkSpaceSize "
           "below one row (impl/adv_api/tiling/activation/softmax_tiling.cpp:328-358), and the device then runs no "
           "rounds and writes nothing -- make it for a buffer of at least GetSoftMaxFlashMinTmpSize");
    if (t.splitK != K || t.reduceM != t.splitM || t.reduceK != rk || t.splitSize != t.splitM * K ||
        t.reduceSize != t.splitM * rk || t.tailM >= t.splitM || t.tailSplitSize != t.tailM * K ||
        t.tailReduceSize != t.tailM * rk || uint64_t(t.rangeM) * t.splitM + t.tailM != M)
      fail("api-argument", api, loc,
           strf("tiling {srcM %u, srcK %u, splitM %u, splitK %u, splitSize %u, reduceM %u, reduceK %u, reduceSize "
                "%u, rangeM %u, tailM %u, tailSplitSize %u, tailReduceSize %u} is for this shape, so the A2 code uses "
                "it as given, but it is not one SoftMaxFlashTilingFunc makes (splitK = srcK, reduceK = %u, the sizes "
                "splitM / tailM times those, rangeM x splitM + tailM = srcM, tailM < splitM)",
                t.srcM, t.srcK, t.splitM, t.splitK, t.splitSize, t.reduceM, t.reduceK, t.reduceSize, t.rangeM,
                t.tailM, t.tailSplitSize, t.tailReduceSize, rk));
    const uint64_t layout = (2ull * t.splitSize + 4ull * t.reduceSize) * 4;  // tmpBuffer0 .. inSumTmp (:173-181)
    if (update && tmp && !on_stack && tmp->GetSize() < layout)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes; the tiling's %u rows a round need %llu (2 splitSize + 4 reduceSize "
                "floats, CANN's A2 layout): a tiling made for a bigger localWorkSpaceSize", tmp->GetSize(), t.splitM,
                static_cast<unsigned long long>(layout)));
  }
  if (tmp && !on_stack) {
    const uint32_t need = softmax_flash_min_tmp(K, sizeof(U), update);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetSoftMaxFlashMinTmpSize gives as the minimum "
                "for srcK %u%s", tmp->GetSize(), need, K, update ? " with isUpdate" : ""));
  }
  if (tmp && !(t.srcM == M && t.srcK == K)) {
    // Re-tiled on the device from the sharedTmpBuffer's size W in floats (softmax_common_flash.h:109-145; all-half
    // with isUpdate too, before it turns to the stack buffer): SoftMaxFlashTilingFunc's kernel side
    // (softmax_tiling_func.h:72-111) makes W / (2 blk + 2 srcK) rows a round, W / (4 blk + 2 srcK) with isUpdate,
    // blk = 8 for half with float sums, else 32 / sizeof(T); 0 rows trips its ASCENDC_ASSERT. Below 2 blk + 2 srcK
    // floats this is tighter than the host's minimum (blk + srcK + 64) once srcK > 64 - blk.
    const uint32_t blk = (sizeof(T) == 2 && sizeof(U) == 4) ? 8 : kBlk / sizeof(T);
    const uint32_t row = blk * (update ? 4 : 2) + 2 * K;
    if (tmp->GetSize() / 4 < row)
      fail("tensor-bounds", api, loc,
           strf("the tiling is not for [srcM, srcK] = [%u, %u] (it has [%u, %u]), so A2 re-tiles on the device from "
                "the sharedTmpBuffer: %u bytes hold %u floats, below one row's %u (%u x %u + 2 x srcK%s), and "
                "SoftMaxFlashTilingFunc's ASCENDC_ASSERT (reduceM > 0) fails -- pass a tiling made for this shape",
                M, K, t.srcM, t.srcK, tmp->GetSize(), tmp->GetSize() / 4, row, blk, update ? 4 : 2,
                update ? ", isUpdate" : ""));
  }
  if (!update) {  // SoftMax itself (SoftMaxNDImpl)
    softmax_nd<T, U>(dst, &sum, &max, src, tmp, s, loc, api);
    return;
  }
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, n, "dstTensor").dst(sum, nu, "sumTensor").dst(max, nu, "maxTensor");
  c.dst(emax, nt, "expMaxTensor").src(in_sum, nu, "inSumTensor").src(in_max, nu, "inMaxTensor");
  if (tmp && tmp->GetSize() && !on_stack) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");  // on_stack: untouched
  std::vector<uint8_t> bad;
  const bool tracked = c.commit(Flow::Manual);  // before dst (may be src) and sum / max (may be inSum / inMax) change
  if (tracked) {
    bad.assign(M, 0);
    for (uint32_t r = 0; r < M; ++r) {
      for (uint32_t k = 0; k < oriK && !bad[r]; ++k) bad[r] = ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * K + k);
      for (uint32_t k = 0; k < bu && !bad[r]; ++k)  // A2 computes every lane of the block (:207-228)
        bad[r] = ApiCall::lane_poisoned(c.operand(5), uint64_t(r) * bu + k) ||
                 ApiCall::lane_poisoned(c.operand(6), uint64_t(r) * bu + k);
    }
  }
  // A2 computes M, a, b, the new sum and expMax lane by lane over each row's block (softmax_flash_nd_process_impl.h
  // :207-228); the emulator computes one value a row, so it needs the page's precondition that a row's inMax / inSum
  // block holds one value (poisoned lanes excepted: they poison the row instead)
  for (uint32_t r = 0; r < M; ++r)
    for (const AscendC::LocalTensor<U>* in : {&in_max, &in_sum}) {
      const U* v = in->data() + uint64_t(r) * bu;
      const int op = in == &in_max ? 6 : 5;
      for (uint32_t k = 1; k < bu; ++k) {
        if (tracked && (ApiCall::lane_poisoned(c.operand(op), uint64_t(r) * bu) ||
                        ApiCall::lane_poisoned(c.operand(op), uint64_t(r) * bu + k)))
          continue;
        if (std::memcmp(&v[k], &v[0], sizeof(U)) != 0)
          fail("api-argument", api, loc,
               strf("%s row %u: lane %u holds %g, lane 0 %g -- SoftmaxFlash.md: each row's block of 32 bytes holds "
                    "one value (A2 computes each lane, the emulator one value a row)",
                    op == 6 ? "inMaxTensor" : "inSumTensor", r, k, double(to_f(v[k])), double(to_f(v[0]))));
      }
    }
  ctx().stats.vector_elems += n;
  std::vector<float> e(K);
  std::vector<T> out(n);
  std::vector<float> os(M), om(M), oe(M);
  for (uint32_t r = 0; r < M; ++r) {
    const T* x = src.data() + uint64_t(r) * K;
    float m = to_f(x[0]);
    for (uint32_t k = 1; k < oriK; ++k) m = OpMax::ap(m, to_f(x[k]));  // a NaN anywhere gives NaN (OpMax)
    for (uint32_t k = 0; k < K; ++k) e[k] = hm::exp(to_f(x[k]) - m);
    const float sm = reduce_sum_loop<float>(e.data(), oriK);
    const float im = to_f(in_max.data()[uint64_t(r) * bu]), is = to_f(in_sum.data()[uint64_t(r) * bu]);
    const float big = OpMax::ap(im, m);
    const float a = hm::exp(m - big), b = hm::exp(im - big) * is;
    const float ns = b + a * sm;
    const float f = a / ns;
    for (uint32_t k = 0; k < K; ++k) out[uint64_t(r) * K + k] = softmax_out<T>(e[k] * f);
    os[r] = ns, om[r] = big, oe[r] = b / ns;
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < n; ++k) d[k] = out[k];
  for (uint32_t r = 0; r < M; ++r) {  // after all rows read inSum / inMax, which may be sum / max
    for (uint32_t k = 0; k < bu; ++k) {
      sum.data()[uint64_t(r) * bu + k] = softmax_out<U>(os[r]);
      max.data()[uint64_t(r) * bu + k] = softmax_out<U>(om[r]);
    }
    for (uint32_t k = 0; k < bt; ++k) emax.data()[uint64_t(r) * bt + k] = softmax_out<T>(oe[r]);
  }
  if (tmp && tmp->GetSize() && !on_stack) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t r = 0; r < M; ++r) {
    const bool ok = bad.empty() || !bad[r];
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * sizeof(T)), K * sizeof(T), ok);
    shadow_fill(sum.m_.ub_off() + r * kBlk, kBlk, ok);
    shadow_fill(max.m_.ub_off() + r * kBlk, kBlk, ok);
    shadow_fill(emax.m_.ub_off() + r * kBlk, kBlk, ok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
void SoftmaxFlash(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                  const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inSumTensor,
                  const LocalTensor<T>& inMaxTensor, const SoftMaxTiling& tiling, bool isUpdate = false,
                  const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_softmax_flash<T, T, isBasicBlock>(dstTensor, sumTensor, maxTensor, srcTensor, expMaxTensor,
                                                     inSumTensor, inMaxTensor, nullptr, tiling, isUpdate,
                                                     softmaxShapeInfo, loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
void SoftmaxFlash(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                  const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                  const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inSumTensor,
                  const LocalTensor<float>& inMaxTensor, const SoftMaxTiling& tiling, bool isUpdate = false,
                  const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_softmax_flash<half, float, isBasicBlock>(dstTensor, sumTensor, maxTensor, srcTensor, expMaxTensor,
                                                            inSumTensor, inMaxTensor, nullptr, tiling, isUpdate,
                                                            softmaxShapeInfo, loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
void SoftmaxFlash(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                  const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inSumTensor,
                  const LocalTensor<T>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                  const SoftMaxTiling& tiling, bool isUpdate = false, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                  OPKIT_LOC) {
  ::opkit_emu::adv_softmax_flash<T, T, isBasicBlock>(dstTensor, sumTensor, maxTensor, srcTensor, expMaxTensor,
                                                     inSumTensor, inMaxTensor, &sharedTmpBuffer, tiling, isUpdate,
                                                     softmaxShapeInfo, loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
void SoftmaxFlash(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
                  const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                  const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inSumTensor,
                  const LocalTensor<float>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                  const SoftMaxTiling& tiling, bool isUpdate = false, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                  OPKIT_LOC) {
  ::opkit_emu::adv_softmax_flash<half, float, isBasicBlock>(dstTensor, sumTensor, maxTensor, srcTensor, expMaxTensor,
                                                            inSumTensor, inMaxTensor, &sharedTmpBuffer, tiling,
                                                            isUpdate,
                                                            softmaxShapeInfo, loc);
}
}  // namespace AscendC
