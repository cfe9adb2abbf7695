// CANN's lib/quantization/ascend_dequant.h (asc-devkit 82b89a15 include/adv_api/quantization/ascend_dequant.h,
// DequantParams include/adv_api/quantization/ascend_dequant_utils.h:26-30, DeQuantMode
// impl/basic_api/utils/kernel_utils_mode.h:181-184; page docs/zh/api/SIMD-API/高阶API/量化操作/AscendDequant.md):
// int32_t to float / half / bfloat16_t, times a per-column scale, A2 forms:
//   template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
//   AscendDequant(dst, src, LocalTensor<scaleT> deqScale[, sharedTmpBuffer], DequantParams {m, n, calCount})
//   AscendDequant(dst, src, deqScale[, sharedTmpBuffer][, calCount])  (params {src size / scale size, scale size, same})
//   AscendDequant(dst, src, scaleT deqScale[, sharedTmpBuffer], DequantParams)
// As the A2 implementation computes it (impl/adv_api/detail/quantization/dequant/ascend_dequant_common_impl.h):
// DEQUANT_WITH_SINGLE_ROW turns {1, n, calCount} into {n / calCount, calCount, calCount} when calCount is 32-byte
// aligned for dstT and divides n (:207-223); each source element is cast to float, the first calCount columns of
// each row multiplied by the float scale of their column (uint64_t scale: its low 32 bits as a float, bfloat16_t:
// widened; :225-255, :273-326), the other n - calCount columns left unscaled, and every row cast to dstT (half:
// CAST_NONE, bfloat16_t: CAST_RINT; :194-204, :328-363) into a dst row of n rounded up to 32 bytes of dstT. Pairs
// (dstT, scaleT) as IsTemplateValid lists them (:125-155): tensor (half, uint64_t), (float, float),
// (float, bfloat16_t), (bfloat16_t, bfloat16_t), (bfloat16_t, float); scalar the last four. Checked as its CPU-debug
// asserts (:42-122): n x 4 bytes a multiple of 32, m x n within src, calCount in (0, n] and within deqScale, m rows of
// dst within dst, without DequantParams src size divisible by deqScale size (and, for uint64_t, deqScale size by 8)
// (api-argument); a sharedTmpBuffer below GetAscendDequantMaxMinTmpSize's minimum for [m, n], (64 + n + n + 8) x 4
// bytes (impl/adv_api/tiling/quantization/ascend_dequant_tiling_impl.cpp), is tensor-bounds.
#pragma once
#include <cstring>
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
enum class DeQuantMode : uint8_t {
  DEQUANT_WITH_SINGLE_ROW = 0,  // {1, m * n, n} = {m, n, n}
  DEQUANT_WITH_MULTI_ROW,       // {1, m * n, n} != {m, n, n}
};
struct DequantParams {
  uint32_t m;         // rows
  uint32_t n;         // elements of a source row, 32-byte aligned as int32
  uint32_t calCount;  // the first calCount of each row are scaled
};
}  // namespace AscendC

namespace opkit_emu {
template <class D, class S, bool tensor>
constexpr bool dequant_pair_ok() {
  using std::is_same;
  constexpr bool a = is_same<S, float>::value && is_same<D, float>::value;
  constexpr bool b = is_same<S, bfloat16_t>::value && is_same<D, float>::value;
  constexpr bool c = is_same<S, bfloat16_t>::value && is_same<D, bfloat16_t>::value;
  constexpr bool d = is_same<S, float>::value && is_same<D, bfloat16_t>::value;
  return a || b || c || d || (tensor && is_same<S, uint64_t>::value && is_same<D, half>::value);
}
template <class S>
inline float dequant_scale_f(S s) {
  if constexpr (std::is_same<S, uint64_t>::value) {  // the low 32 bits as a float (GatherMask of the even words)
    const uint32_t lo = static_cast<uint32_t>(s);
    float f;
    std::memcpy(&f, &lo, 4);
    return f;
  } else {
    return to_f(s);
  }
}

// scale_t: the deqScale tensor, or null for the scalar `scale`; total: elements processed (calCount forms)
template <class D, class S, AscendC::DeQuantMode mode>
void adv_ascend_dequant(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<int32_t>& src,
                        const AscendC::LocalTensor<S>* scale_t, S scale, const AscendC::LocalTensor<uint8_t>* tmp,
                        AscendC::DequantParams p, uint64_t total, SrcLoc loc) {
  const char* api = "AscendDequant";
  const uint32_t dblk = kBlk / sizeof(D);
  if (p.n == 0 || p.n * 4 % kBlk)
    fail("api-argument", api, loc, strf("params.n %u: must be > 0 and n x 4 bytes a multiple of 32", p.n));
  if (uint64_t(p.m) * p.n > src.GetSize())
    fail("api-argument", api, loc, strf("params.m %u x params.n %u is beyond srcTensor (%u elements)", p.m, p.n,
                                        src.GetSize()));
  if (p.calCount == 0 || p.calCount > p.n)
    fail("api-argument", api, loc, strf("params.calCount %u: must be in (0, params.n %u]", p.calCount, p.n));
  if (scale_t && p.calCount > scale_t->GetSize())
    fail("api-argument", api, loc, strf("params.calCount %u is beyond deqScale (%u elements)", p.calCount,
                                        scale_t->GetSize()));
  if (tmp) {
    const uint32_t need = (64 + p.n + p.n + 8) * 4;
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetAscendDequantMaxMinTmpSize gives for [%u, %u]",
                tmp->GetSize(), need, p.m, p.n));
  }
  if (mode == AscendC::DeQuantMode::DEQUANT_WITH_SINGLE_ROW && p.m == 1 && p.calCount % dblk == 0 &&
      p.n % p.calCount == 0) {
    p.m = p.n / p.calCount;
    p.n = p.calCount;
  }
  const uint32_t dinner = (p.n + dblk - 1) / dblk * dblk;
  if (uint64_t(p.m) * dinner > dst.GetSize())
    fail("api-argument", api, loc, strf("params.m %u rows of %u (n rounded up to 32 bytes of dstT) are beyond "
                                        "dstTensor (%u elements)", p.m, dinner, dst.GetSize()));
  if (total > uint64_t(p.m) * p.n) total = uint64_t(p.m) * p.n;
  const uint64_t dspan = total ? (total - 1) / p.n * dinner + (total - 1) % p.n + 1 : 0;
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, dspan, "dstTensor").src(src, total, "srcTensor");
  if (scale_t) c.src(*scale_t, p.calCount, "deqScale");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(total, 0);
    for (uint64_t k = 0; k < total; ++k) {
      bad[k] = ApiCall::lane_poisoned(c.operand(1), k);
      if (scale_t && k % p.n < p.calCount) bad[k] |= ApiCall::lane_poisoned(c.operand(2), k % p.n);
    }
  }
  ctx().stats.vector_elems += total;
  std::vector<float> sc(p.calCount);
  for (uint32_t j = 0; j < p.calCount; ++j) sc[j] = dequant_scale_f<S>(scale_t ? scale_t->data()[j] : scale);
  const RoundMode m = std::is_same<D, bfloat16_t>::value ? RoundMode::CAST_RINT : RoundMode::CAST_NONE;
  std::vector<D> res(total);
  for (uint64_t k = 0; k < total; ++k) {
    float f;
    cast_values<float, int32_t>(&f, &src.data()[k], 1, RoundMode::CAST_NONE);
    const uint32_t j = static_cast<uint32_t>(k % p.n);
    if (j < p.calCount) f *= sc[j];
    if constexpr (std::is_same<D, float>::value) res[k] = f;
    else cast_values<D, float>(&res[k], &f, 1, m);
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t k = 0; k < total; ++k) {
    const uint64_t at = k / p.n * dinner + k % p.n;
    dst.data()[at] = res[k];
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(at * sizeof(D)), sizeof(D), bad.empty() || !bad[k]);
  }
}

template <class D, class S, AscendC::DeQuantMode mode>
void adv_ascend_dequant_noparams(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<int32_t>& src,
                                 const AscendC::LocalTensor<S>& scale, const AscendC::LocalTensor<uint8_t>* tmp,
                                 uint32_t cal, SrcLoc loc) {
  const char* api = "AscendDequant";
  if (cal == 0 || cal > src.GetSize())
    fail("api-argument", api, loc, strf("calCount %u: must be in (0, srcTensor size %u]", cal, src.GetSize()));
  if (scale.GetSize() == 0 || src.GetSize() % scale.GetSize())
    fail("api-argument", api, loc, strf("without DequantParams, srcTensor size %u must be divisible by deqScale "
                                        "size %u", src.GetSize(), scale.GetSize()));
  if (std::is_same<S, uint64_t>::value && scale.GetSize() % 8)
    fail("api-argument", api, loc, strf("without DequantParams a uint64_t deqScale's size %u must be divisible by 8",
                                        scale.GetSize()));
  adv_ascend_dequant<D, S, mode>(dst, src, &scale, S{}, tmp,
                                 {src.GetSize() / scale.GetSize(), scale.GetSize(), scale.GetSize()}, cal, loc);
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_DQ_TPL template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
#define OPKIT_DQ_CHECK(tensor)                                                                              \
  static_assert(::opkit_emu::dequant_pair_ok<dstT, scaleT, tensor>(),                                       \
                "opkit emulator: AscendDequant: this deqScale / dstTensor type pair is not supported on A2 " \
                "(AscendDequant.md)")
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                DequantParams params, OPKIT_LOC) {
  OPKIT_DQ_CHECK(true);
  ::opkit_emu::adv_ascend_dequant<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, &sharedTmpBuffer,
                                                      params, uint64_t(params.m) * params.n, loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const LocalTensor<scaleT>& deqScale, DequantParams params, OPKIT_LOC) {
  OPKIT_DQ_CHECK(true);
  ::opkit_emu::adv_ascend_dequant<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, nullptr, params,
                                                      uint64_t(params.m) * params.n, loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                const uint32_t calCount, OPKIT_LOC) {
  OPKIT_DQ_CHECK(true);
  ::opkit_emu::adv_ascend_dequant_noparams<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, &sharedTmpBuffer,
                                                               calCount, loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const LocalTensor<scaleT>& deqScale, const uint32_t calCount, OPKIT_LOC) {
  OPKIT_DQ_CHECK(true);
  ::opkit_emu::adv_ascend_dequant_noparams<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, nullptr, calCount,
                                                               loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                OPKIT_LOC) {
  OPKIT_DQ_CHECK(true);
  ::opkit_emu::adv_ascend_dequant_noparams<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, &sharedTmpBuffer,
                                                               srcTensor.GetSize(), loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const LocalTensor<scaleT>& deqScale, OPKIT_LOC) {
  OPKIT_DQ_CHECK(true);
  ::opkit_emu::adv_ascend_dequant_noparams<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, nullptr,
                                                               srcTensor.GetSize(), loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const scaleT deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                                DequantParams params, OPKIT_LOC) {
  OPKIT_DQ_CHECK(false);
  ::opkit_emu::adv_ascend_dequant<dstT, scaleT, mode>(dstTensor, srcTensor, nullptr, deqScale, &sharedTmpBuffer,
                                                      params, uint64_t(params.m) * params.n, loc);
}
OPKIT_DQ_TPL void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                                const scaleT deqScale, DequantParams params, OPKIT_LOC) {
  OPKIT_DQ_CHECK(false);
  ::opkit_emu::adv_ascend_dequant<dstT, scaleT, mode>(dstTensor, srcTensor, nullptr, deqScale, nullptr, params,
                                                      uint64_t(params.m) * params.n, loc);
}
#undef OPKIT_DQ_TPL
#undef OPKIT_DQ_CHECK
}  // namespace AscendC
