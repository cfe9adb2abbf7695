// CANN's lib/activation/simplesoftmax.h (asc-devkit 82b89a15 include/adv_api/activation/simplesoftmax.h; page
// docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SimpleSoftMax.md): softmax of an ND [srcM, srcK] tensor with the row
// max and sum given, the A2 forms -- all tensors of T (half / float), or a half source / dst with float sum / max --
// with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
//             const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
//   SimpleSoftMax(dst, inSum, inMax, src[, sharedTmpBuffer], const SoftMaxTiling&, const SoftMaxShapeInfo& = {})
// dst = exp(x - max) / sum over all srcK columns, in float as the A2 code computes it (impl/adv_api/detail/activation/
// softmax/membase/common/simple_softmax_common_impl.h: Sub, Exp, Div; half cast in, dst rounded once); max / sum
// are each row's, read at the first element of its 32-byte block (the page: the block holds one value). No
// reduction: bitwise the three steps. The tiling only cuts rows into rounds: not read. Checked: an empty
// SoftMaxShapeInfo (CANN would read the tensor's ShapeInfo, which the emulator does not keep), srcK x sizeof(T) not
// a multiple of 32, tensors too small are api-argument; a sharedTmpBuffer below GetSoftMaxMinTmpSize's minimum
// ((32 / sizeof(T) + srcK + 64) x 4 bytes, the SoftMax/SimpleSoftMax Tiling page's buffer) is tensor-bounds. NZ: a
// compile error. Poison: a row is poison in dst when its max / sum or one of its lanes is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_softmax.h"

namespace opkit_emu {
template <class T, class U>
void adv_simple_softmax(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& in_sum,
                        const AscendC::LocalTensor<U>& in_max, const AscendC::LocalTensor<T>& src,
                        const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::SoftMaxShapeInfo& s, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: SimpleSoftMax supports half and float (SimpleSoftMax.md, A2)");
  const char* api = "SimpleSoftMax";
  softmax_shape_checks<T>(api, s, loc, false);
  const uint32_t M = s.srcM, K = s.srcK, bu = kBlk / sizeof(U);
  const uint64_t n = uint64_t(M) * K, nu = uint64_t(M) * bu;
  if (src.GetSize() < n || dst.GetSize() < n || in_sum.GetSize() < nu || in_max.GetSize() < nu)
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but src holds %u, dst %u (need %llu), inSum %u and inMax %u elements (need "
              "%llu)", M, K, src.GetSize(), dst.GetSize(), static_cast<unsigned long long>(n), in_sum.GetSize(),
              in_max.GetSize(), static_cast<unsigned long long>(nu)));
  if (tmp) {
    const uint32_t need = (kBlk / sizeof(T) + K + 64) * 4;
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetSoftMaxMinTmpSize gives as the minimum for "
                "srcK %u", tmp->GetSize(), need, K));
  }
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").src(in_sum, nu, "inSumTensor").src(in_max, nu, "inMaxTensor").dst(dst, n, "dstTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be src) is written
    bad.assign(M, 0);
    for (uint32_t r = 0; r < M; ++r) {
      bad[r] = ApiCall::lane_poisoned(c.operand(1), uint64_t(r) * bu) ||
               ApiCall::lane_poisoned(c.operand(2), uint64_t(r) * bu);
      for (uint32_t k = 0; k < K && !bad[r]; ++k) bad[r] = ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * K + k);
    }
  }
  ctx().stats.vector_elems += n;
  std::vector<T> out(n);
  for (uint32_t r = 0; r < M; ++r) {
    const T* x = src.data() + uint64_t(r) * K;
    const float mx = to_f(in_max.data()[uint64_t(r) * bu]), sm = to_f(in_sum.data()[uint64_t(r) * bu]);
    for (uint32_t k = 0; k < K; ++k) out[uint64_t(r) * K + k] = softmax_out<T>(hm::exp(to_f(x[k]) - mx) / sm);
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < n; ++k) d[k] = out[k];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t r = 0; r < M; ++r)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * sizeof(T)), K * sizeof(T),
                bad.empty() || !bad[r]);
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_SIMPLE_TPL                                                                                \
  template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false, \
            const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define OPKIT_EMU_SIMPLE_NZ \
  static_assert(!isDataFormatNZ, "not supported on the emulator: SimpleSoftMax with isDataFormatNZ")
OPKIT_EMU_SIMPLE_TPL
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor, const LocalTensor<T>& inMaxTensor,
                   const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SIMPLE_NZ;
  (void)tiling;
  ::opkit_emu::adv_simple_softmax<T, T>(dstTensor, inSumTensor, inMaxTensor, srcTensor, nullptr, softmaxShapeInfo, loc);
}
OPKIT_EMU_SIMPLE_TPL
void SimpleSoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& inSumTensor,
                   const LocalTensor<float>& inMaxTensor, const LocalTensor<half>& srcTensor,
                   const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SIMPLE_NZ;
  (void)tiling;
  ::opkit_emu::adv_simple_softmax<half, float>(dstTensor, inSumTensor, inMaxTensor, srcTensor, nullptr,
                                               softmaxShapeInfo, loc);
}
OPKIT_EMU_SIMPLE_TPL
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor, const LocalTensor<T>& inMaxTensor,
                   const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                   const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SIMPLE_NZ;
  (void)tiling;
  ::opkit_emu::adv_simple_softmax<T, T>(dstTensor, inSumTensor, inMaxTensor, srcTensor, &sharedTmpBuffer,
                                        softmaxShapeInfo, loc);
}
OPKIT_EMU_SIMPLE_TPL
void SimpleSoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& inSumTensor,
                   const LocalTensor<float>& inMaxTensor, const LocalTensor<half>& srcTensor,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SIMPLE_NZ;
  (void)tiling;
  ::opkit_emu::adv_simple_softmax<half, float>(dstTensor, inSumTensor, inMaxTensor, srcTensor, &sharedTmpBuffer,
                                               softmaxShapeInfo, loc);
}
#undef OPKIT_EMU_SIMPLE_TPL
#undef OPKIT_EMU_SIMPLE_NZ
}  // namespace AscendC
