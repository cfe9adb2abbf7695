// CANN's lib/reduce/sum.h (asc-devkit 82b89a15 include/adv_api/reduce/sum.h:54-80, SumParams in sum_utils.h:27-31;
// page docs/zh/api/SIMD-API/高阶API/归约操作/Sum接口/Sum.md): the sum of each row of an [outter, inner] ND tensor
// over its first n elements, half and float, with and without sharedTmpBuffer:
//   template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
//   Sum(dst, src[, sharedTmpBuffer], const SumParams& {outter, inner, n})
// dst[o] = the row's sum, added as the count-form ReduceSum adds (the page: "the same binary tree as ReduceSum"),
// so bitwise equal to ReduceSum of the row. Checked: inner must be n rounded up to 32 bytes (the page's formula;
// otherwise "the result is wrong"), n > 0 and outter > 0 (api-argument); a sharedTmpBuffer below
// GetSumMaxMinTmpSize's size, align(ceil(n / per-repeat), per-block) x sizeof(T) (impl/adv_api/tiling/reduce/
// sum_tiling.cpp:19-42), is tensor-bounds. Poison: a row's result is poison when one of its n lanes is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
struct SumParams {
  uint32_t outter = 1;
  uint32_t inner;  // n rounded up to 32 bytes, in elements
  uint32_t n;      // the row's actual length
};
}  // namespace AscendC

namespace opkit_emu {
template <class T>
void adv_sum(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
             const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::SumParams& p, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: Sum supports half and float");
  const char* api = "Sum";
  if (p.outter == 0 || p.n == 0) fail("api-argument", api, loc, strf("outter %u, n %u: both must be > 0", p.outter, p.n));
  const uint32_t blk = kBlk / sizeof(T), rep = kRepeat / sizeof(T);
  const uint32_t inner = (p.n + blk - 1) / blk * blk;
  if (p.inner != inner)
    fail("api-argument", api, loc,
         strf("inner %u, but n %u rounded up to 32 bytes is %u (Sum.md: inner = (n * sizeof(T) + 31) / 32 * 32 / "
              "sizeof(T))", p.inner, p.n, inner));
  if (tmp) {
    const uint32_t need = ((p.n + rep - 1) / rep + blk - 1) / blk * blk * sizeof(T);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetSumMaxMinTmpSize gives for n %u",
                tmp->GetSize(), need, p.n));
  }
  const uint64_t total = uint64_t(p.outter) * p.inner;
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, p.outter, "dstTensor").src(src, total, "srcTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(p.outter, 0);
    for (uint32_t o = 0; o < p.outter; ++o)
      for (uint32_t i = 0; i < p.n && !bad[o]; ++i) bad[o] = ApiCall::lane_poisoned(c.operand(1), uint64_t(o) * p.inner + i);
  }
  ctx().stats.vector_elems += total;
  std::vector<T> res(p.outter);
  for (uint32_t o = 0; o < p.outter; ++o) res[o] = from_f<T>(reduce_sum_loop<T>(src.data() + uint64_t(o) * p.inner, p.n));
  for (uint32_t o = 0; o < p.outter; ++o) dst.data()[o] = res[o];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t o = 0; o < p.outter; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * sizeof(T)), sizeof(T), bad.empty() || !bad[o]);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const SumParams& sumParams, OPKIT_LOC) {
  ::opkit_emu::adv_sum<T>(dstTensor, srcTensor, &sharedTmpBuffer, sumParams, loc);
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SumParams& sumParams, OPKIT_LOC) {
  ::opkit_emu::adv_sum<T>(dstTensor, srcTensor, nullptr, sumParams, loc);
}
}  // namespace AscendC
