// SoftMax, the advanced API (asc-devkit docs/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftMax.md, ND format):
// per row of src viewed as [srcM, srcK] (SoftMaxShapeInfo), max over the first oriSrcK columns, exp(x - max),
// sum over the first oriSrcK columns, dst = exp / sum; sumTensor / maxTensor get the row's sum / max broadcast
// over one 32-byte block (8 floats or 16 halves per row). Computed in float as CANN's implementation does
// (its work buffer is float; impl/adv_api/detail/activation/softmax/membase reduces over originalSrcShape.k);
// the sum adds 64-float repeats as the count-form ReduceSum does. Padded columns (oriSrcK..srcK) are computed
// and written, not reduced ("补齐的数据会参与部分运算"). Poison: a row is poison in dst, sum and max when one of
// its reduced source lanes is. Not modelled: the NZ format (isDataFormatNZ, a compile error), the
// SoftmaxConfig constant shapes (oriSrcM/oriSrcK in the template argument are ignored), and a call without
// SoftMaxShapeInfo (CANN then reads the tensor's ShapeInfo, which the emulator does not keep: api-argument).
#pragma once
#include "opkit_emu/host_math.h"

#include "opkit_emu/adv_tiling.h"
#include "opkit_emu/cast.h"
#include "opkit_emu/reduce.h"

namespace AscendC {
struct SoftMaxShapeInfo {
  uint32_t srcM;
  uint32_t srcK;
  uint32_t oriSrcM;
  uint32_t oriSrcK;
};
// SoftmaxFlashV3's parameters (asc-devkit 82b89a15 include/adv_api/activation/softmax_utils.h:63-71)
struct SoftMaxParams {
  uint32_t srcM{0};
  uint32_t srcK{0};
  uint32_t oriSrcM{0};
  uint32_t oriSrcK{0};
  uint32_t loopCnt{1};
  uint32_t splitMeanCnt{8};
  float alpha{0.9375};
};
enum class SoftmaxMode { SOFTMAX_NORMAL = 0, SOFTMAX_OUTPUT_WITHOUT_BRC = 1 };
struct SoftmaxConfig {
  bool isCheckTiling = true;
  uint32_t oriSrcM = 0;
  uint32_t oriSrcK = 0;
  SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};
}  // namespace AscendC

namespace opkit_emu {
// The SoftMax family's float -> half output casts: CANN's A2 code casts with FLOAT2HALF_ROUND_MODE =
// RoundMode::CAST_ROUND, ties away from zero (asc-devkit 82b89a15 impl/adv_api/detail/activation/softmax/membase/
// v220/softmax_common_impl.h:31), not the nearest-even of from_f.
template <class T>
inline T softmax_out(float v) {
  if constexpr (std::is_same<T, half>::value) {
    half h;
    cast_generic_loop<half, float>(&h, &v, 1, AscendC::RoundMode::CAST_ROUND);
    return h;
  } else {
    return from_f<T>(v);
  }
}

// The checks every SoftMax-family API makes on its SoftMaxShapeInfo (api-argument): not empty, the last axis 32-byte
// aligned (each API's page, <api>.md), and -- for the APIs that reduce over oriSrcK -- oriSrcK within srcK.
template <class T>
inline void softmax_shape_checks(const char* api, const AscendC::SoftMaxShapeInfo& s, SrcLoc loc, bool ori = true) {
  if (s.srcM == 0 || s.srcK == 0)
    fail("api-argument", api, loc,
         "SoftMaxShapeInfo is empty: CANN then takes the shape from the tensor's ShapeInfo, which the emulator does "
         "not keep; pass {srcM, srcK, oriSrcM, oriSrcK}");
  if (s.srcK * sizeof(T) % kBlk != 0)
    fail("api-argument", api, loc,
         strf("srcK %u x %zu bytes is not 32-byte aligned (%s.md: the last axis must be)", s.srcK, sizeof(T), api));
  if (ori && s.oriSrcK > s.srcK)
    fail("api-argument", api, loc, strf("oriSrcK %u is beyond srcK %u", s.oriSrcK, s.srcK));
}

template <class T1, class T2>
void softmax_nd(const AscendC::LocalTensor<T1>& dst, const AscendC::LocalTensor<T2>* sum,
                const AscendC::LocalTensor<T2>* max, const AscendC::LocalTensor<T1>& src,
                const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::SoftMaxShapeInfo& s, SrcLoc loc,
                const char* call = "SoftMax") {  // SoftmaxFlash without update runs this too, under its own name
  static_assert(std::is_same<T1, half>::value || std::is_same<T1, float>::value,
                "opkit emulator: SoftMax supports half and float");
  static_assert(std::is_same<T2, T1>::value || (std::is_same<T1, half>::value && std::is_same<T2, float>::value),
                "opkit emulator: SoftMax's sum / max tensors are of the source type, or float for a half source");
  softmax_shape_checks<T1>(call, s, loc, false);  // oriSrcK beyond srcK: clamped below
  const uint32_t M = s.srcM, K = s.srcK, oriK = s.oriSrcK == 0 || s.oriSrcK > K ? K : s.oriSrcK;
  const uint32_t blk = kBlk / sizeof(T2);
  const uint64_t n = uint64_t(M) * K;
  ApiCall c(Pipe::V, call, loc);
  c.src(src, n, "srcTensor").dst(dst, n, "dstTensor");
  if (sum) c.dst(*sum, uint64_t(M) * blk, "sumTensor");
  if (max) c.dst(*max, uint64_t(M) * blk, "maxTensor");
  if (tmp) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be src) is written
    const Operand& so = c.operand(0);
    bad.resize(M);
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t k = 0; k < oriK && !bad[r]; ++k) bad[r] = ApiCall::lane_poisoned(so, uint64_t(r) * K + k);
  }
  ctx().stats.vector_elems += n;
  std::vector<float> e(K);
  for (uint32_t r = 0; r < M; ++r) {
    const T1* x = src.data() + uint64_t(r) * K;
    float mx = to_f(x[0]);
    for (uint32_t k = 1; k < oriK; ++k) mx = OpMax::ap(mx, to_f(x[k]));  // a NaN anywhere gives NaN (OpMax)
    for (uint32_t k = 0; k < K; ++k) e[k] = hm::exp(to_f(x[k]) - mx);
    const float sm = reduce_sum_loop<float>(e.data(), oriK);
    T1* y = dst.data() + uint64_t(r) * K;
    for (uint32_t k = 0; k < K; ++k) y[k] = softmax_out<T1>(e[k] / sm);
    for (uint32_t k = 0; k < blk; ++k) {
      if (sum) sum->data()[uint64_t(r) * blk + k] = softmax_out<T2>(sm);
      if (max) max->data()[uint64_t(r) * blk + k] = softmax_out<T2>(mx);
    }
  }
  if (tmp) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);  // the work buffer now holds intermediates
  for (uint32_t r = 0; r < M; ++r) {
    const bool ok = bad.empty() || !bad[r];
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * sizeof(T1)), K * sizeof(T1), ok);
    if (sum) shadow_fill(sum->m_.ub_off() + r * kBlk, kBlk, ok);
    if (max) shadow_fill(max->m_.ub_off() + r * kBlk, kBlk, ok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
// the forms of SoftMax.md: with sum/max of the source type or float (half source), without them; the work
// buffer from the framework or passed in (sharedTmpBuffer)
#define OPKIT_EMU_SOFTMAX_TPL \
  template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false, \
            const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define OPKIT_EMU_SOFTMAX_NZ \
  static_assert(!isDataFormatNZ, "not supported on the emulator: SoftMax with isDataFormatNZ (see docs/cann.md)")
OPKIT_EMU_SOFTMAX_TPL
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
             const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
             OPKIT_LOC) {
  OPKIT_EMU_SOFTMAX_NZ;
  (void)tiling;
  opkit_emu::softmax_nd<T, T>(dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, softmaxShapeInfo, loc);
}
OPKIT_EMU_SOFTMAX_TPL
void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor, const LocalTensor<float>& maxTensor,
             const LocalTensor<half>& srcTensor, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
             OPKIT_LOC) {
  OPKIT_EMU_SOFTMAX_NZ;
  (void)tiling;
  opkit_emu::softmax_nd<half, float>(dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, softmaxShapeInfo, loc);
}
OPKIT_EMU_SOFTMAX_TPL
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
             const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SOFTMAX_NZ;
  (void)tiling;
  opkit_emu::softmax_nd<T, T>(dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, softmaxShapeInfo, loc);
}
OPKIT_EMU_SOFTMAX_TPL
void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor, const LocalTensor<float>& maxTensor,
             const LocalTensor<half>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  OPKIT_EMU_SOFTMAX_NZ;
  (void)tiling;
  opkit_emu::softmax_nd<half, float>(dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, softmaxShapeInfo,
                                     loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  (void)tiling;
  opkit_emu::softmax_nd<T, T>(dstTensor, nullptr, nullptr, srcTensor, nullptr, softmaxShapeInfo, loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
             const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  (void)tiling;
  opkit_emu::softmax_nd<T, T>(dstTensor, nullptr, nullptr, srcTensor, &sharedTmpBuffer, softmaxShapeInfo, loc);
}
#undef OPKIT_EMU_SOFTMAX_TPL
#undef OPKIT_EMU_SOFTMAX_NZ
}  // namespace AscendC
