// CANN's lib/activation/softmaxgrad.h (asc-devkit 82b89a15 include/adv_api/activation/softmaxgrad.h; pages
// docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxGrad.md, SoftmaxGradFront.md): the softmax backward of an ND
// [srcM, srcK] tensor, half and float, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
//   SoftmaxGrad(dst, grad, src[, sharedTmpBuffer], const SoftMaxTiling&, bool isFront = false, SoftMaxShapeInfo = {})
//   template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
//   SoftmaxGradFront(dst, grad, src[, sharedTmpBuffer], const SoftMaxTiling&, SoftMaxShapeInfo = {})
// Per row, in float as the A2 implementation computes it (impl/adv_api/detail/activation/softmax/membase/common/
// softmax_grad_nd_impl.h:29-311; half: src and grad cast to float, the result cast back once): s = sum over the
// first oriSrcK columns of src x grad; SoftmaxGrad: dst = (grad - s) x src over all srcK columns (padded columns
// computed, not reduced, as the page says); isFront / SoftmaxGradFront: dst is s broadcast over one 32-byte block
// per row ([srcM, 32 / sizeof(T)]). The sum adds 64-float repeats as the count-form ReduceSum does (as SoftMax here;
// CANN's ReduceSumLastNDImpl / the basic-block BlockReduceSum chain may group differently): equal within float
// rounding, not bitwise. The tiling only cuts rows into rounds (CANN recomputes it when the shape differs), which
// does not change a row's result. Checked as SoftMax: the shape from SoftMaxShapeInfo (an empty one is
// api-argument: CANN would read the tensor's ShapeInfo, which the emulator does not keep), srcK x sizeof(T) a
// multiple of 32 and oriSrcK <= srcK (api-argument, the page's 约束说明); a sharedTmpBuffer below
// GetSoftMaxGradMinTmpSize's minimum (impl/adv_api/tiling/activation/softmax_tiling.cpp:403-443: half
// (2 x 16 + 3 x srcK + 64) x 4 bytes; float (8 + srcK + 64) x 4 isFront, (2 x 8 + srcK + 64) x 4 otherwise) is
// tensor-bounds. NZ format: a compile error. Poison: a row is poison in dst when one of its reduced lanes is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_softmax.h"

namespace opkit_emu {
template <class> inline constexpr bool sg_false = false;

// GetSoftMaxGradMinTmpSize (A2 branch), bytes
inline uint32_t softmax_grad_min_tmp(uint32_t k, uint32_t size, bool front) {
  const uint32_t blk = kBlk / size;
  if (size == 2) return (blk * 2 + k * 3 + 64) * 4;
  return (front ? blk + k + 64 : blk * 2 + k + 64) * 4;
}

template <class T>
void adv_softmax_grad(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& grad,
                      const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp, bool front,
                      const AscendC::SoftMaxShapeInfo& s, const char* api, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: SoftmaxGrad supports half and float (SoftmaxGrad.md, A2)");
  softmax_shape_checks<T>(api, s, loc);
  const uint32_t M = s.srcM, K = s.srcK, oriK = s.oriSrcK == 0 ? K : s.oriSrcK, blk = kBlk / sizeof(T);
  const uint64_t n = uint64_t(M) * K, nd = front ? uint64_t(M) * blk : n;
  if (src.GetSize() < n || grad.GetSize() < n || dst.GetSize() < nd)
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but srcTensor holds %u, gradTensor %u and dstTensor %u elements (needs %llu)",
              M, K, src.GetSize(), grad.GetSize(), dst.GetSize(), static_cast<unsigned long long>(nd)));
  if (tmp) {
    const uint32_t need = softmax_grad_min_tmp(K, sizeof(T), front);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetSoftMaxGradMinTmpSize gives as the minimum "
                "for srcK %u (%s)", tmp->GetSize(), need, K, front ? "isFront" : "not isFront"));
  }
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").src(grad, n, "gradTensor").dst(dst, nd, "dstTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be src) is written
    bad.assign(M, 0);
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t k = 0; k < oriK && !bad[r]; ++k)
        bad[r] = ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * K + k) ||
                 ApiCall::lane_poisoned(c.operand(1), uint64_t(r) * K + k);
  }
  ctx().stats.vector_elems += n;
  std::vector<float> p(K);
  std::vector<T> out(nd);
  for (uint32_t r = 0; r < M; ++r) {
    const T *x = src.data() + uint64_t(r) * K, *g = grad.data() + uint64_t(r) * K;
    for (uint32_t k = 0; k < K; ++k) p[k] = to_f(x[k]) * to_f(g[k]);
    const float sm = reduce_sum_loop<float>(p.data(), oriK);
    if (front) {
      for (uint32_t k = 0; k < blk; ++k) out[uint64_t(r) * blk + k] = softmax_out<T>(sm);
    } else {
      for (uint32_t k = 0; k < K; ++k) out[uint64_t(r) * K + k] = softmax_out<T>((to_f(g[k]) - sm) * to_f(x[k]));
    }
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < nd; ++k) d[k] = out[k];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  const uint32_t row = (front ? blk : K) * sizeof(T);
  for (uint32_t r = 0; r < M; ++r) shadow_fill(dst.m_.ub_off() + r * row, row, bad.empty() || !bad[r]);
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_SOFTMAXGRAD_NZ \
  static_assert(!isDataFormatNZ, "not supported on the emulator: SoftmaxGrad / SoftmaxGradFront with isDataFormatNZ")
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor, const LocalTensor<T>& srcTensor,
                 const SoftMaxTiling& tiling, bool isFront = false, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                 OPKIT_LOC) {
  OPKIT_EMU_SOFTMAXGRAD_NZ;
  (void)tiling;
  ::opkit_emu::adv_softmax_grad<T>(dstTensor, gradTensor, srcTensor, nullptr, isFront, softmaxShapeInfo,
                                   "SoftmaxGrad", loc);
}
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling, bool isFront = false,
                 const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SOFTMAXGRAD_NZ;
  (void)tiling;
  ::opkit_emu::adv_softmax_grad<T>(dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, isFront, softmaxShapeInfo,
                                   "SoftmaxGrad", loc);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                      const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                      const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SOFTMAXGRAD_NZ;
  (void)tiling;
  ::opkit_emu::adv_softmax_grad<T>(dstTensor, gradTensor, srcTensor, nullptr, true, softmaxShapeInfo,
                                   "SoftmaxGradFront", loc);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                      const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                      const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SOFTMAXGRAD_NZ;
  (void)tiling;
  ::opkit_emu::adv_softmax_grad<T>(dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, true, softmaxShapeInfo,
                                   "SoftmaxGradFront", loc);
}
#undef OPKIT_EMU_SOFTMAXGRAD_NZ
}  // namespace AscendC
