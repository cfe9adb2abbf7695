// CANN's lib/transpose/confusion_transpose.h (asc-devkit 82b89a15 include/adv_api/transpose/confusion_transpose.h:20-40;
// page docs/zh/api/SIMD-API/高阶API/张量变换/Transpose-96.md): the advanced Transpose, A2 forms
//   template <typename T> Transpose(dst, src[, LocalTensor<uint8_t> sharedTmpBuffer], TransposeType,
//                                   ConfusionTransposeTiling&)
// on the tiling GetTransposeTilingInfo fills. Emulated: scene 7, TRANSPOSE_ND2ND_ONLY ([H, W] to [W, H], H and W
// multiples of 16; see adv_transpose_2d), and scene 1 / 2, TRANSPOSE_NZ2ND_0213 and TRANSPOSE_NZ2NZ_0213 (2- and
// 4-byte T), as the A2 code moves the data (impl/adv_api/detail/transpose/confusion_transpose/
// confusion_transpose_base_0213.h:60-220): src [B, A1, A3/16, A2/16, 16, 16] (per (b, a1) an NZ matrix of aligned A2
// rows x aligned A3 columns: element (a2, a3) at (a3 / 16) x alignA2 x 16 + a2 x 16 + a3 % 16) becomes
//  - NZ2ND: [B, alignA2, A1, alignA3] ND, element (b, a2, a1, a3) at ((b x alignA2 + a2) x A1 + a1) x alignA3 + a3;
//  - NZ2NZ: per (b, a2) an NZ matrix of A1 rows x alignA3 columns: (a3 / 16) x A1 x 16 + a1 x 16 + a3 % 16.
// Every lane of the aligned extents moves (the 16 x 16 fractals are whole). The tiling (param1 B, param2 A1,
// param3 alignA3, param4 alignA2, param6 the buffer's elements) must be the 0213 one (param0 = 32 / sizeof(T)) and made
// with a buffer (param6 > 0); the tensors large enough (api-argument); a sharedTmpBuffer below the tiling's buffer
// (param6 elements) or GetTransposeMaxMinTmpSize's minimum (16 x 16 x sizeof(T), confusion_transpose_tiling_impl.cpp
// :320-328) is tensor-bounds. The other TransposeTypes of this API (scenes 3-6, 13-16) are not emulated: a call
// stops with not-emulated naming the type. The form without sharedTmpBuffer takes CANN's stack buffer (not modelled).
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
// ConfusionTransposeTiling comes from kernel_tiling/kernel_tiling.h, as in CANN; the tiling parameter is a template
// so that kernel_operator.h need not export the struct's global name.

namespace opkit_emu {
// scene 7 (TRANSPOSE_ND2ND_ONLY): [H, W] to [W, H] (ConfusionTransposeOnlyCompute, confusion_transpose_base_impl.h
// :447-477: H / 16 row blocks of W / blockSize TransDataTo5HD repeats); H and W multiples of 16 (Transpose-96.md
// 场景7), the tiling param0 blockSize, param1 H, param2 W (GetConfusionTransposeOnlyTilingInfo). No buffer.
template <class T, class Tiling>
void adv_transpose_2d(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const Tiling& t,
                      SrcLoc loc) {
  const char* api = "Transpose";
  const uint32_t H = t.param1, W = t.param2;
  if (t.param0 != 32 / sizeof(T) || H == 0 || W == 0 || H % 16 || W % 16)
    fail("api-argument", api, loc,
         strf("TRANSPOSE_ND2ND_ONLY: tiling param0 %u (expected %u), H %u, W %u: H and W must be multiples of 16 "
              "(Transpose-96.md 场景7) and the tiling GetTransposeTilingInfo's for [H, W] and this type size",
              t.param0, unsigned(32 / sizeof(T)), H, W));
  const uint64_t n = uint64_t(H) * W;
  if (src.GetSize() < n || dst.GetSize() < n)
    fail("api-argument", api, loc,
         strf("[%u, %u] = %llu elements, but srcTensor holds %u and dstTensor %u", H, W,
              static_cast<unsigned long long>(n), src.GetSize(), dst.GetSize()));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dstTensor").src(src, n, "srcTensor");
  const bool checked = c.commit(Flow::Manual);
  std::vector<T> out(n);
  std::vector<uint8_t> bad(n, 0);
  for (uint32_t r = 0; r < H; ++r)
    for (uint32_t col = 0; col < W; ++col) {
      out[uint64_t(col) * H + r] = src.data()[uint64_t(r) * W + col];
      if (checked) bad[uint64_t(col) * H + r] = ApiCall::lane_poisoned(c.operand(1), uint64_t(r) * W + col);
    }
  for (uint64_t i = 0; i < n; ++i) dst.data()[i] = out[i];
  ctx().stats.vector_elems += n;
  for (uint64_t i = 0; i < n; ++i)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(i * sizeof(T)), sizeof(T), !bad[i]);
}

template <class T, class Tiling>
void adv_confusion_transpose(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                             const AscendC::LocalTensor<uint8_t>* tmp, AscendC::TransposeType type, const Tiling& t,
                             SrcLoc loc) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4,
                "opkit emulator: Transpose's scenes 1-7 take int16_t / uint16_t / half / int32_t / uint32_t / float "
                "(Transpose-96.md)");
  const char* api = "Transpose";
  using TT = AscendC::TransposeType;
  if (type == TT::TRANSPOSE_ND2ND_ONLY) return adv_transpose_2d(dst, src, t, loc);
  const bool nd = type == TT::TRANSPOSE_NZ2ND_0213;
  if (!nd && type != TT::TRANSPOSE_NZ2NZ_0213)
    fail("not-emulated", api, loc,
         strf("TransposeType %d: the emulator runs the advanced Transpose's scenes 1, 2 and 7 "
              "(TRANSPOSE_NZ2ND_0213, TRANSPOSE_NZ2NZ_0213, TRANSPOSE_ND2ND_ONLY) only", static_cast<int>(type)));
  const uint32_t B = t.param1, A1 = t.param2, aA3 = t.param3, aA2 = t.param4, pop = t.param6;
  if (t.param0 != 32 / sizeof(T) || B == 0 || A1 == 0 || aA3 == 0 || aA2 == 0 || aA3 % 16 || aA2 % 16)
    fail("api-argument", api, loc,
         strf("the ConfusionTransposeTiling is not a 0213 tiling for this type (param0 %u, expected %u; B %u, A1 %u, "
              "alignA3 %u, alignA2 %u): fill it with GetTransposeTilingInfo(srcShape [B, A1, A2, A3], ..., "
              "sizeof(T), %d)", t.param0, unsigned(32 / sizeof(T)), B, A1, aA3, aA2, static_cast<int>(type)));
  if (pop == 0)
    fail("api-argument", api, loc,
         "tiling param6 (the buffer's elements) is 0: GetTransposeTilingInfo was given a stackBufferSize below "
         "GetTransposeMaxMinTmpSize's minimum");
  if (tmp) {
    const uint64_t need = std::max<uint64_t>(uint64_t(pop) * sizeof(T), 256u * sizeof(T));
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %llu the tiling was made for (param6 %u elements; "
                "GetTransposeMaxMinTmpSize's minimum is 256 elements)", tmp->GetSize(),
                static_cast<unsigned long long>(need), pop));
  }
  const uint64_t n = uint64_t(B) * A1 * aA2 * aA3;
  if (src.GetSize() < n || dst.GetSize() < n)
    fail("api-argument", api, loc,
         strf("[B %u, A1 %u, alignA2 %u, alignA3 %u] = %llu elements, but srcTensor holds %u and dstTensor %u", B, A1,
              aA2, aA3, static_cast<unsigned long long>(n), src.GetSize(), dst.GetSize()));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dstTensor").src(src, n, "srcTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const bool checked = c.commit(Flow::Manual);
  std::vector<T> out(n);
  std::vector<uint8_t> bad(n, 0);
  for (uint32_t b = 0; b < B; ++b)
    for (uint32_t a1 = 0; a1 < A1; ++a1)
      for (uint32_t a2 = 0; a2 < aA2; ++a2)
        for (uint32_t a3 = 0; a3 < aA3; ++a3) {
          const uint64_t base = uint64_t(b) * A1 * aA2 * aA3;
          const uint64_t s = base + uint64_t(a1) * aA2 * aA3 + uint64_t(a3 / 16) * aA2 * 16 + a2 * 16 + a3 % 16;
          const uint64_t d = nd ? base + (uint64_t(a2) * A1 + a1) * aA3 + a3
                                : base + uint64_t(a2) * A1 * aA3 + uint64_t(a3 / 16) * A1 * 16 + a1 * 16 + a3 % 16;
          out[d] = src.data()[s];
          if (checked) bad[d] = ApiCall::lane_poisoned(c.operand(1), s);
        }
  for (uint64_t i = 0; i < n; ++i) dst.data()[i] = out[i];
  ctx().stats.vector_elems += n;
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t i = 0; i < n; ++i)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(i * sizeof(T)), sizeof(T), !bad[i]);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, class ConfusionTransposeTilingT>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
               TransposeType transposeType, ConfusionTransposeTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_confusion_transpose(dst, src, &sharedTmpBuffer, transposeType, tiling, loc);
}
template <typename T, class ConfusionTransposeTilingT>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, TransposeType transposeType,
               ConfusionTransposeTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_confusion_transpose(dst, src, nullptr, transposeType, tiling, loc);
}
}  // namespace AscendC
