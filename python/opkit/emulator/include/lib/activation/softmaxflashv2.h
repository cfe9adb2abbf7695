// CANN's lib/activation/softmaxflashv2.h (asc-devkit 82b89a15 include/adv_api/activation/softmaxflashv2.h; page
// docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxFlashV2.md): the online-softmax step of an ND
// [srcM, srcK] tensor, the A2 forms -- all tensors of T (half / float), or a half source / dst / expMax with float
// sums and maxima -- with and without sharedTmpBuffer:
//   template <typename T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
//             bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
//   SoftmaxFlashV2(dst, expSum, max, src, expMax, inExpSum, inMax[, sharedTmpBuffer], tiling, shapeInfo = {})
// Per row, in float as the A2 code computes it (impl/adv_api/detail/activation/softmax/membase/common/
// softmax_flashv2_impl/softmax_flashv2_no_update_impl.h, softmax_flashv2_update_impl.h; half cast in, each output
// rounded once): m = max over the first oriSrcK columns; isUpdate: m = max(inMax, m), expMax = exp(inMax - m);
// dst = exp(x - m) over all srcK columns; s = sum of dst over the first oriSrcK columns (of the float values, not of
// the rounded dst); expSum = isUpdate ? expMax x inExpSum + s : s; max = m. max / expSum / expMax are the row's
// value broadcast over one 32-byte block of their type (8 float or 16 half per row). inMax / inExpSum are read at
// their first element of each row's block. The sum as SoftMax's here (count-form ReduceSum): equal within float
// rounding, not bitwise. The tiling only cuts rows into rounds: not read. The kernel-side SoftMaxFlashV2TilingFunc
// that makes one: opkit_emu/softmax_flashv2_tiling.h.
// Checked as SoftMax: an empty SoftMaxShapeInfo, srcK x sizeof(T) not a multiple of 32, oriSrcK beyond srcK,
// tensors too small are api-argument; a sharedTmpBuffer below GetSoftMaxFlashV2MinTmpSize's minimum (A2 branch of
// impl/adv_api/tiling/activation/softmax_tiling.cpp GetSoftMaxFlashV2MinTmpSize: (2 blk + srcK + 64) x 4 bytes for a
// half source, (blk + 64) x 4 for float, blk = 32 / sizeof(sum type); with isBasicBlock and srcK % 64 == 0,
// 8 x (blk + srcK + 64 (128 at srcK 1024)) x 4 half, 8 x (blk + 64 (128 at srcK 1024)) x 4 float) is
// tensor-bounds. Not: NZ format, SoftmaxConfig's SOFTMAX_OUTPUT_WITHOUT_BRC mode (compile errors naming them).
// Poison: a row is poison in every output when one of its reduced lanes (or its inMax / inExpSum) is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_softmax.h"
#include "opkit_emu/softmax_flashv2_tiling.h"  // SoftMaxFlashV2TilingFunc (kernel side)

namespace opkit_emu {
// GetSoftMaxFlashV2MinTmpSize (A2, no flash output broadcast), bytes
inline uint32_t softmax_flashv2_min_tmp(uint32_t k, uint32_t size1, uint32_t size2, bool basic) {
  const uint32_t blk = kBlk / size2, unit = k == 1024 ? 128 : 64;
  if (basic && k % 64 == 0) return 4 * 8 * (size1 == 2 ? blk + k + unit : blk + unit);
  return 4 * (size1 == 2 ? blk * 2 + k + 64 : blk + 64);
}

// T: source / dst / expMax; U: expSum / max / inExpSum / inMax
template <class T, class U, bool update, bool basic>
void adv_softmax_flashv2(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& esum,
                         const AscendC::LocalTensor<U>& max, const AscendC::LocalTensor<T>& src,
                         const AscendC::LocalTensor<T>& emax, const AscendC::LocalTensor<U>& in_sum,
                         const AscendC::LocalTensor<U>& in_max, const AscendC::LocalTensor<uint8_t>* tmp,
                         const AscendC::SoftMaxShapeInfo& s, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: SoftmaxFlashV2 supports half and float (SoftmaxFlashV2.md, A2)");
  const char* api = "SoftmaxFlashV2";
  softmax_shape_checks<T>(api, s, loc);
  const uint32_t M = s.srcM, K = s.srcK, oriK = s.oriSrcK == 0 ? K : s.oriSrcK;
  const uint32_t bu = kBlk / sizeof(U), bt = kBlk / sizeof(T);
  const uint64_t n = uint64_t(M) * K, nu = uint64_t(M) * bu, nt = uint64_t(M) * bt;
  if (src.GetSize() < n || dst.GetSize() < n || esum.GetSize() < nu || max.GetSize() < nu ||
      (update && (emax.GetSize() < nt || in_sum.GetSize() < nu || in_max.GetSize() < nu)))
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but src holds %u, dst %u (need %llu), expSum %u, max %u%s (need %llu), "
              "expMax %u (need %llu)", M, K, src.GetSize(), dst.GetSize(), static_cast<unsigned long long>(n),
              esum.GetSize(), max.GetSize(), update ? ", inExpSum / inMax" : "", static_cast<unsigned long long>(nu),
              emax.GetSize(), static_cast<unsigned long long>(nt)));
  if (tmp) {
    const uint32_t need = softmax_flashv2_min_tmp(K, sizeof(T), sizeof(U), basic);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetSoftMaxFlashV2MinTmpSize gives as the minimum "
                "for srcK %u", tmp->GetSize(), need, K));
  }
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, n, "dstTensor").dst(esum, nu, "expSumTensor").dst(max, nu, "maxTensor");
  if (update) c.dst(emax, nt, "expMaxTensor").src(in_sum, nu, "inExpSumTensor").src(in_max, nu, "inMaxTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be src) is written
    bad.assign(M, 0);
    for (uint32_t r = 0; r < M; ++r) {
      for (uint32_t k = 0; k < oriK && !bad[r]; ++k) bad[r] = ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * K + k);
      if (update && !bad[r])
        bad[r] = ApiCall::lane_poisoned(c.operand(5), uint64_t(r) * bu) ||
                 ApiCall::lane_poisoned(c.operand(6), uint64_t(r) * bu);
    }
  }
  ctx().stats.vector_elems += n;
  std::vector<float> e(K);
  std::vector<T> out(n);
  for (uint32_t r = 0; r < M; ++r) {
    const T* x = src.data() + uint64_t(r) * K;
    float m = to_f(x[0]);
    for (uint32_t k = 1; k < oriK; ++k) m = OpMax::ap(m, to_f(x[k]));  // a NaN anywhere gives NaN (OpMax)
    float em = 0.0f;
    if (update) {
      const float im = to_f(in_max.data()[uint64_t(r) * bu]);
      m = OpMax::ap(im, m);
      em = hm::exp(im - m);
    }
    for (uint32_t k = 0; k < K; ++k) e[k] = hm::exp(to_f(x[k]) - m), out[uint64_t(r) * K + k] = softmax_out<T>(e[k]);
    float sm = reduce_sum_loop<float>(e.data(), oriK);
    if (update) sm = em * to_f(in_sum.data()[uint64_t(r) * bu]) + sm;
    for (uint32_t k = 0; k < bu; ++k) {
      esum.data()[uint64_t(r) * bu + k] = softmax_out<U>(sm);
      max.data()[uint64_t(r) * bu + k] = softmax_out<U>(m);
    }
    if (update)
      for (uint32_t k = 0; k < bt; ++k) emax.data()[uint64_t(r) * bt + k] = softmax_out<T>(em);
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < n; ++k) d[k] = out[k];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t r = 0; r < M; ++r) {
    const bool ok = bad.empty() || !bad[r];
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * sizeof(T)), K * sizeof(T), ok);
    shadow_fill(esum.m_.ub_off() + r * kBlk, kBlk, ok);
    shadow_fill(max.m_.ub_off() + r * kBlk, kBlk, ok);
    if (update) shadow_fill(emax.m_.ub_off() + r * kBlk, kBlk, ok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_FLASHV2_TPL                                                                                 \
  template <typename T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,         \
            bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define OPKIT_EMU_FLASHV2_CHECK                                                                               \
  static_assert(!isDataFormatNZ, "not supported on the emulator: SoftmaxFlashV2 with isDataFormatNZ");       \
  static_assert(config.mode == SoftmaxMode::SOFTMAX_NORMAL,                                                  \
                "not supported on the emulator: SoftmaxFlashV2 with SoftmaxConfig mode SOFTMAX_OUTPUT_WITHOUT_BRC")
OPKIT_EMU_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                    const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_FLASHV2_CHECK;
  (void)tiling;
  ::opkit_emu::adv_softmax_flashv2<T, T, isUpdate, isBasicBlock>(dstTensor, expSumTensor, maxTensor, srcTensor,
                                                                 expMaxTensor, inExpSumTensor, inMaxTensor, nullptr,
                                                                 softmaxShapeInfo, loc);
}
OPKIT_EMU_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                    const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                    const LocalTensor<float>& inMaxTensor, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_FLASHV2_CHECK;
  (void)tiling;
  ::opkit_emu::adv_softmax_flashv2<half, float, isUpdate, isBasicBlock>(dstTensor, expSumTensor, maxTensor, srcTensor,
                                                                        expMaxTensor, inExpSumTensor, inMaxTensor,
                                                                        nullptr, softmaxShapeInfo, loc);
}
OPKIT_EMU_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                    const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_FLASHV2_CHECK;
  (void)tiling;
  ::opkit_emu::adv_softmax_flashv2<T, T, isUpdate, isBasicBlock>(dstTensor, expSumTensor, maxTensor, srcTensor,
                                                                 expMaxTensor, inExpSumTensor, inMaxTensor,
                                                                 &sharedTmpBuffer, softmaxShapeInfo, loc);
}
OPKIT_EMU_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                    const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                    const LocalTensor<float>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_FLASHV2_CHECK;
  (void)tiling;
  ::opkit_emu::adv_softmax_flashv2<half, float, isUpdate, isBasicBlock>(dstTensor, expSumTensor, maxTensor, srcTensor,
                                                                        expMaxTensor, inExpSumTensor, inMaxTensor,
                                                                        &sharedTmpBuffer, softmaxShapeInfo, loc);
}
#undef OPKIT_EMU_FLASHV2_TPL
#undef OPKIT_EMU_FLASHV2_CHECK
}  // namespace AscendC
