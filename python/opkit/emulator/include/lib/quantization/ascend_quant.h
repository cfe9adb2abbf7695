// CANN's lib/quantization/ascend_quant.h (asc-devkit 82b89a15 include/adv_api/quantization/ascend_quant.h:20-136,
// AscendQuantConfig include/adv_api/quantization/ascend_quant_utils.h:31-40,70; page
// docs/zh/api/SIMD-API/高阶API/量化操作/AscendQuant.md): half / float to int8_t, A2 forms:
//   template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
//   per tensor:  AscendQuant(dst, src[, sharedTmpBuffer], float scale, float offset[, calCount])
//   per channel: AscendQuant(dst, src[, sharedTmpBuffer], scaleTensor, T offset[, scaleCount, calCount])
//                AscendQuant(dst, src[, sharedTmpBuffer], scaleTensor, offsetTensor[, scaleCount, offsetCount, calCount])
// dst[i] = int8(half(half(x_i) * half(scale_c)) + half(offset_c)), c = i % scaleCount, computed in half as the A2
// implementation does (impl/adv_api/detail/quantization/quant/ascend_quant_pre_impl.h:101-164,320-348: a float source
// cast to half, Muls/Mul and Adds/Add in half, Cast<int8_t, half> CAST_NONE: nearest even, saturating). For a float
// T the per-channel forms convert scaleTensor (and offsetTensor) to half in place, over the first scaleCount x 2
// bytes ("source vector of scale is reused", :413-419, :458-465): the caller's float scale is overwritten, as on the
// device. Checked as CANN's CPU-debug checks do (ascend_quant_common_impl.h:135-186, ascend_quant_pre_impl.h:31-98):
// calCount > 0 and within src and dst; scaleCount > 0, within scaleTensor, dividing calCount; offsetCount equal to
// scaleCount and within offsetTensor (api-argument); a sharedTmpBuffer below GetAscendQuantMaxMinTmpSize's minimum,
// 2 x 256 bytes (impl/adv_api/tiling/quantization/ascend_quant_tiling_impl.cpp:35), is tensor-bounds. A config with
// calcCount / scaleCount set (the constant-shape form) uses those counts. Poison flows lane by lane.
#pragma once
#include <cstring>
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
struct AscendQuantConfig {
  constexpr AscendQuantConfig(const uint32_t calcCount, const uint32_t offsetCount, const uint32_t scaleCount,
                              const uint32_t workLocalSize)
      : calcCount(calcCount), offsetCount(offsetCount), scaleCount(scaleCount), workLocalSize(workLocalSize) {}
  uint32_t calcCount = 0;
  uint32_t offsetCount = 0;
  uint32_t scaleCount = 0;
  uint32_t workLocalSize = 0;
};
constexpr AscendQuantConfig ASCEND_QUANT_DEFAULT_CFG = {0, 0, 0, 0};
}  // namespace AscendC

namespace opkit_emu {
constexpr uint32_t kAscendQuantMinTmp = 2 * 256;  // GetAscendQuantMinTmpSize

inline half quant_half(float x) {
  half h;
  cast_values<half, float>(&h, &x, 1, RoundMode::CAST_NONE);
  return h;
}

// scale / offset: a tensor (per channel, sc elements) or a scalar (sc == 0 for that operand)
template <class T>
void adv_ascend_quant(const AscendC::LocalTensor<int8_t>& dst, const AscendC::LocalTensor<T>& src,
                      const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::LocalTensor<T>* scale_t, float scale,
                      const AscendC::LocalTensor<T>* offset_t, float offset, uint32_t scale_count,
                      uint32_t offset_count, uint32_t n, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: AscendQuant supports half and float sources on this chip");
  const char* api = "AscendQuant";
  if (n == 0 || n > src.GetSize() || n > dst.GetSize())
    fail("api-argument", api, loc,
         strf("calCount %u: must be > 0 and within srcTensor (%u elements) and dstTensor (%u)", n, src.GetSize(),
              dst.GetSize()));
  if (scale_t) {
    if (scale_count == 0 || scale_count > scale_t->GetSize() || n % scale_count)
      fail("api-argument", api, loc,
           strf("scaleCount %u: must be > 0, within scaleTensor (%u elements) and divide calCount %u", scale_count,
                scale_t->GetSize(), n));
    if (offset_t && (offset_count != scale_count || offset_count > offset_t->GetSize()))
      fail("api-argument", api, loc,
           strf("offsetCount %u: must equal scaleCount %u and be within offsetTensor (%u elements)", offset_count,
                scale_count, offset_t->GetSize()));
  }
  if (tmp && tmp->GetSize() < kAscendQuantMinTmp)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetAscendQuantMaxMinTmpSize gives as the minimum",
              tmp->GetSize(), kAscendQuantMinTmp));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dstTensor").src(src, n, "srcTensor");
  if (scale_t) c.src(*scale_t, scale_count, "scaleTensor");
  if (offset_t) c.src(*offset_t, offset_count, "offsetTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      bad[i] = ApiCall::lane_poisoned(c.operand(1), i);
      if (scale_t) bad[i] |= ApiCall::lane_poisoned(c.operand(2), i % scale_count);
      if (offset_t) bad[i] |= ApiCall::lane_poisoned(c.operand(3), i % scale_count);
    }
  }
  ctx().stats.vector_elems += n;
  // the scale and offset as the device holds them: half
  std::vector<half> hs(scale_t ? scale_count : 1), ho(offset_t ? offset_count : 1);
  for (uint32_t k = 0; k < hs.size(); ++k) hs[k] = quant_half(scale_t ? to_f(scale_t->data()[k]) : scale);
  for (uint32_t k = 0; k < ho.size(); ++k) ho[k] = quant_half(offset_t ? to_f(offset_t->data()[k]) : offset);
  std::vector<int8_t> res(n);
  for (uint32_t i = 0; i < n; ++i) {
    const half x = quant_half(to_f(src.data()[i]));
    const half p = from_f<half>(to_f(x) * to_f(hs[scale_t ? i % scale_count : 0]));
    const half q = from_f<half>(to_f(p) + to_f(ho[offset_t ? i % scale_count : 0]));
    cast_values<int8_t, half>(&res[i], &q, 1, RoundMode::CAST_NONE);
  }
  for (uint32_t i = 0; i < n; ++i) dst.data()[i] = res[i];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t i = 0; i < n; ++i) shadow_fill(dst.m_.ub_off() + i, 1, bad.empty() || !bad[i]);
  if constexpr (std::is_same<T, float>::value) {  // the float scale / offset tensors now hold half values
    if (scale_t) std::memcpy(scale_t->data(), hs.data(), hs.size() * sizeof(half));
    if (offset_t) std::memcpy(offset_t->data(), ho.data(), ho.size() * sizeof(half));
  }
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_AQ_TPL template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
#define OPKIT_AQ_N(n) ((config.workLocalSize != 0 && config.calcCount != 0) ? config.calcCount : (n))
#define OPKIT_AQ_CN(n) ((config.scaleCount != 0 && config.calcCount != 0) ? config.calcCount : (n))
#define OPKIT_AQ_SC(n) ((config.scaleCount != 0 && config.calcCount != 0) ? config.scaleCount : (n))
// per tensor
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                              const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, &sharedTmpBuffer, nullptr, scale, nullptr, offset, 0, 0,
                                   OPKIT_AQ_N(calCount), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                              const float offset, const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, nullptr, nullptr, scale, nullptr, offset, 0, 0,
                                   OPKIT_AQ_N(calCount), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                              OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, &sharedTmpBuffer, nullptr, scale, nullptr, offset, 0, 0,
                                   OPKIT_AQ_N(srcTensor.GetSize()), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                              const float offset, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, nullptr, nullptr, scale, nullptr, offset, 0, 0,
                                   OPKIT_AQ_N(srcTensor.GetSize()), loc);
}
// per channel, scalar offset
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                              const T offset, const uint32_t scaleCount, const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, 0.0f, nullptr,
                                   ::opkit_emu::to_f(offset), OPKIT_AQ_SC(scaleCount), 0, OPKIT_AQ_CN(calCount), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<T>& scaleTensor, const T offset, const uint32_t scaleCount,
                              const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, nullptr, &scaleTensor, 0.0f, nullptr,
                                   ::opkit_emu::to_f(offset), OPKIT_AQ_SC(scaleCount), 0, OPKIT_AQ_CN(calCount), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                              const T offset, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, 0.0f, nullptr,
                                   ::opkit_emu::to_f(offset), OPKIT_AQ_SC(scaleTensor.GetSize()), 0,
                                   OPKIT_AQ_CN(srcTensor.GetSize()), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<T>& scaleTensor, const T offset, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, nullptr, &scaleTensor, 0.0f, nullptr,
                                   ::opkit_emu::to_f(offset), OPKIT_AQ_SC(scaleTensor.GetSize()), 0,
                                   OPKIT_AQ_CN(srcTensor.GetSize()), loc);
}
// per channel, offset tensor
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                              const LocalTensor<T>& offsetTensor, const uint32_t scaleCount,
                              const uint32_t offsetCount, const uint32_t calCount, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, 0.0f, &offsetTensor, 0.0f,
                                   OPKIT_AQ_SC(scaleCount), OPKIT_AQ_SC(offsetCount), OPKIT_AQ_CN(calCount), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor,
                              const uint32_t scaleCount, const uint32_t offsetCount, const uint32_t calCount,
                              OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, nullptr, &scaleTensor, 0.0f, &offsetTensor, 0.0f,
                                   OPKIT_AQ_SC(scaleCount), OPKIT_AQ_SC(offsetCount), OPKIT_AQ_CN(calCount), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                              const LocalTensor<T>& offsetTensor, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, 0.0f, &offsetTensor, 0.0f,
                                   OPKIT_AQ_SC(scaleTensor.GetSize()), OPKIT_AQ_SC(offsetTensor.GetSize()),
                                   OPKIT_AQ_CN(srcTensor.GetSize()), loc);
}
OPKIT_AQ_TPL void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                              const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor, OPKIT_LOC) {
  ::opkit_emu::adv_ascend_quant<T>(dstTensor, srcTensor, nullptr, &scaleTensor, 0.0f, &offsetTensor, 0.0f,
                                   OPKIT_AQ_SC(scaleTensor.GetSize()), OPKIT_AQ_SC(offsetTensor.GetSize()),
                                   OPKIT_AQ_CN(srcTensor.GetSize()), loc);
}
#undef OPKIT_AQ_TPL
#undef OPKIT_AQ_N
#undef OPKIT_AQ_CN
#undef OPKIT_AQ_SC
}  // namespace AscendC
