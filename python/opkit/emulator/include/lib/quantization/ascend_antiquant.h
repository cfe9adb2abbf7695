// CANN's lib/quantization/ascend_antiquant.h (asc-devkit 82b89a15 include/adv_api/quantization/ascend_antiquant.h:20-
// 100, AntiQuantShapeInfo ascend_antiquant_utils.h:27-32; page docs/zh/api/SIMD-API/高阶API/量化操作/AscendAntiQuant.md):
// int8_t / int4b_t to half / bfloat16_t, the A2 forms
//   template <typename InputDataType, typename OutputDataType, bool isTranspose>
//   AscendAntiQuant(dst, src, offsetTensor, scaleTensor[, sharedTmpBuffer], k, shapeInfo = {})
//   AscendAntiQuant(dst, src, scaleTensor, sharedTmpBuffer, k, shapeInfo = {})
//   AscendAntiQuant(dst, src, OutputDataType offset, OutputDataType scale[, sharedTmpBuffer], k, shapeInfo = {})
//   AscendAntiQuant(dst, src, OutputDataType scale, sharedTmpBuffer, k, shapeInfo = {})
// computed as the A2 code does (impl/adv_api/detail/quantization/antiquant/ascend_antiquant_impl.h, and
// ascend_antiquant_c220_impl.h for bfloat16_t), src being K rows of N = src.GetSize() / k (no transpose):
//  - half: x = half(src) (exact), then Add / Adds of the offset in half, Mul / Muls of the scale in half, each rounded
//    to half (AntiQuantInnerLoop, AscendAntiQuantNoTransposePerformance :177-205).
//  - bfloat16_t: x = float(half(src)), + float(offset), x float(scale) in float, then Cast CAST_RINT to bfloat16_t
//    (c220 AntiQuantInnerLoop :40-75, AscendAntiQuantNoTransposePerformance :99-149).
//  - offset and scale tensors: the A2 code applies their first N elements to every row (its Add / Mul repeat over the
//    K rows with src1RepStride 0, :186-198 / c220 :124-138): per channel. The page's per-group formula
//    (offset [K / groupSize, N]) is not what that code computes; the emulator follows the code.
//  - the scale-only tensor form groups rows: groupCount = shapeInfo.scaleHeight (else scale's ShapeInfo shape[0]),
//    N = shapeInfo.scaleWidth (else shape[1]); row r uses scale row r / (K / groupCount) (:326-347).
//  - scalar offset / scale: every element (isTranspose or not, :350-360, :410-420).
// Checked: src of int8_t or int4b_t (two elements to a byte, tensor.h; fp8_e8m0_t scales are Ascend 950 forms), dst half or
// bfloat16_t (compile errors); k > 0 dividing src.GetSize(), the tensors large enough, the scale-only form's shape
// known and its groupCount dividing k (api-argument). sharedTmpBuffer, bfloat16_t only (half needs none: min 0): the
// tensor forms below scale.GetSize() x 8 + 64 x k x 4 bytes -- the size at which the A2 code takes its full path
// (AntiQuantCheckPerformanceMode, c220 :250-258), also GetAscendAntiQuantMaxMinTmpSize's per-channel minimum
// (impl/adv_api/tiling/quantization/ascend_antiquant_tiling_impl.cpp:118-129) -- and the scalar forms below 1024 bytes
// (:103) are tensor-bounds. isTranspose with tensor offset / scale is not implemented here: a compile error naming it.
// The forms without sharedTmpBuffer take CANN's stack buffer, not modelled (no check). Poison flows lane by lane.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it

namespace AscendC {
struct AntiQuantShapeInfo {
  uint32_t offsetHeight{0};
  uint32_t offsetWidth{0};
  uint32_t scaleHeight{0};
  uint32_t scaleWidth{0};
};
}  // namespace AscendC

namespace opkit_emu {
template <class S, class D>
void antiquant_types() {
  // int8_t and int4b_t (ascend_antiquant_c220_impl.h:36-41; int4b_t goes through Cast<half, int4b_t>, :131-135)
  static_assert(std::is_same<S, int8_t>::value || std::is_same<S, int4b_t>::value,
                "opkit emulator: AscendAntiQuant takes an int8_t or int4b_t source (AscendAntiQuant.md, A2)");
  static_assert(std::is_same<D, half>::value || std::is_same<D, bfloat16_t>::value,
                "opkit emulator: AscendAntiQuant writes half or bfloat16_t (AscendAntiQuant.md, A2)");
}
template <class D>
inline D antiquant_one(int8_t s, float off, float sc, bool withOff) {
  if constexpr (std::is_same<D, half>::value) {
    float x = static_cast<float>(s);
    if (withOff) x = to_f(from_f<half>(x + off));  // half add, rounded once
    return from_f<half>(x * sc);                    // half mul, rounded once
  } else {
    float x = static_cast<float>(s);
    if (withOff) x = x + off;
    return from_f<bfloat16_t>(x * sc);  // float result, CAST_RINT
  }
}

// kind: 0 tensor offset + scale, 1 tensor scale only, 2 scalar offset + scale, 3 scalar scale only
template <class S, class D>
void adv_antiquant(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src,
                   const AscendC::LocalTensor<D>* off_t, const AscendC::LocalTensor<D>* sc_t, D off_s, D sc_s, int kind,
                   const AscendC::LocalTensor<uint8_t>* tmp, uint32_t K, const AscendC::AntiQuantShapeInfo& si,
                   SrcLoc loc) {
  antiquant_types<S, D>();
  const char* api = "AscendAntiQuant";
  const uint32_t total = src.GetSize();
  if (K == 0 || total % K)
    fail("api-argument", api, loc, strf("k %u must be > 0 and divide src's %u elements (src is k rows of N)", K, total));
  const uint32_t N = total / K;
  uint32_t groups = 1, scN = N;
  if (kind == 1) {
    const AscendC::ShapeInfo shp = sc_t->GetShapeInfo();
    groups = si.scaleHeight ? si.scaleHeight : (shp.shapeDim >= 2 ? shp.shape[0] : 0);
    scN = si.scaleWidth ? si.scaleWidth : (shp.shapeDim >= 2 ? shp.shape[1] : 0);
    if (groups == 0 || scN == 0 || K % groups || scN != N)
      fail("api-argument", api, loc,
           strf("the scale-only form needs scale's [groupCount, N] (shapeInfo.scaleHeight / scaleWidth, else the "
                "scale tensor's ShapeInfo): got [%u, %u] for src of k %u rows x N %u (groupCount must divide k, "
                "width must be N)", groups, scN, K, N));
  }
  if (dst.GetSize() < total || (sc_t && sc_t->GetSize() < groups * N) || (off_t && off_t->GetSize() < N))
    fail("api-argument", api, loc,
         strf("src holds %u elements (k %u x N %u): dst holds %u%s%s", total, K, N, dst.GetSize(),
              sc_t ? strf(", scale %u (needs %u)", sc_t->GetSize(), groups * N).c_str() : "",
              off_t ? strf(", offset %u (needs %u)", off_t->GetSize(), N).c_str() : ""));
  if (tmp && std::is_same<D, bfloat16_t>::value) {
    const uint64_t need = kind <= 1 ? uint64_t(sc_t->GetSize()) * 8 + 256ull * K : 1024;
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %llu bytes the A2 code needs for a bfloat16_t result (%s; "
                "GetAscendAntiQuantMaxMinTmpSize's minimum)", tmp->GetSize(), static_cast<unsigned long long>(need),
                kind <= 1 ? "scale.GetSize() x 8 + 64 x k x 4" : "1024 for scalar offset / scale"));
  }
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, total, "dst");
  if constexpr (is_int4_v<S>) c.read(src.m_, 0, (total + 1) / 2, 8, "src");  // two elements to a byte
  else c.src(src, total, "src");
  if (sc_t) c.src(*sc_t, groups * N, "scale");
  if (off_t) c.src(*off_t, N, "offset");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(total, 0);
    const uint32_t gs = K / groups;
    for (uint32_t i = 0; i < total; ++i) {
      const uint32_t r = i / N, n = i % N, si_ = kind == 1 ? (r / gs) * N + n : n;
      bad[i] = ApiCall::lane_poisoned(c.operand(1), is_int4_v<S> ? i / 2 : i) || (sc_t && ApiCall::lane_poisoned(c.operand(2), si_)) ||
               (off_t && ApiCall::lane_poisoned(c.operand(3), n));
    }
  }
  const uint32_t gs = K / groups;
  for (uint32_t i = 0; i < total; ++i) {
    const uint32_t r = i / N, n = i % N;
    const float sc = sc_t ? to_f(sc_t->data()[kind == 1 ? (r / gs) * N + n : n]) : to_f(sc_s);
    const float of = off_t ? to_f(off_t->data()[n]) : to_f(off_s);
    int8_t v;
    if constexpr (is_int4_v<S>) v = int8_t(nibble_get(src.m_.addr[i / 2], i));
    else v = src.data()[i];
    dst.data()[i] = antiquant_one<D>(v, of, sc, kind == 0 || kind == 2);
  }
  ctx().stats.vector_elems += total;
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t i = 0; i < total; ++i)
    shadow_fill(dst.m_.ub_off() + i * static_cast<uint32_t>(sizeof(D)), sizeof(D), bad.empty() || !bad[i]);
}
template <class...> inline constexpr bool antiquant_false = false;
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_ANTIQUANT_NO_TRANSPOSE(I, O)                                                                      \
  static_assert(!isTranspose || ::opkit_emu::antiquant_false<I, O>,                                             \
                "not supported on the emulator: AscendAntiQuant with isTranspose = true and tensor offset / scale " \
                "(its A2 paths, ascend_antiquant_impl.h:422-545, are not modelled yet)")
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  OPKIT_ANTIQUANT_NO_TRANSPOSE(InputDataType, OutputDataType);
  ::opkit_emu::adv_antiquant<InputDataType, OutputDataType>(dst, src, &offset, &scale, OutputDataType(), OutputDataType(),
                                                            0, &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                     const uint32_t k, const AntiQuantShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  OPKIT_ANTIQUANT_NO_TRANSPOSE(InputDataType, OutputDataType);
  ::opkit_emu::adv_antiquant<InputDataType, OutputDataType>(dst, src, &offset, &scale, OutputDataType(), OutputDataType(),
                                                            0, nullptr, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& scale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                     const uint32_t k, const AntiQuantShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  OPKIT_ANTIQUANT_NO_TRANSPOSE(InputDataType, OutputDataType);
  ::opkit_emu::adv_antiquant<InputDataType, OutputDataType>(dst, src, nullptr, &scale, OutputDataType(), OutputDataType(),
                                                            1, &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const OutputDataType offset, const OutputDataType scale,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_antiquant<InputDataType, OutputDataType>(dst, src, nullptr, nullptr, offset, scale, 2,
                                                            &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const OutputDataType offset, const OutputDataType scale, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_antiquant<InputDataType, OutputDataType>(dst, src, nullptr, nullptr, offset, scale, 2, nullptr, k,
                                                            shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const OutputDataType scale, const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = {}, OPKIT_LOC) {
  ::opkit_emu::adv_antiquant<InputDataType, OutputDataType>(dst, src, nullptr, nullptr, OutputDataType(), scale, 3,
                                                            &sharedTmpBuffer, k, shapeInfo, loc);
}
#undef OPKIT_ANTIQUANT_NO_TRANSPOSE
}  // namespace AscendC
