// Level-0 (mask / repeatTime / repeat parameters) forms whose operands may differ in element type: Cast, and
// the compound instructions Axpy, MulAddDst, FusedMulAdd, FusedMulAddRelu, MulAddRelu, AddRelu, SubRelu.
// Doc pages (asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/ at mirror-cann/asc-devkit 82b89a15):
// 类型转换/Cast.md ("the mask of a conversion counts elements of the larger of the two types"),
// 复合计算/{Axpy,MulAddDst,FusedMulAdd,MulAddRelu,AddRelu,SubRelu}.md, SIMD计算说明/高维切分.md.
//  - A repeat has 256 / max(sizeof) lanes; the mask (level0.h: l0_plan) selects lanes of that count; lane l of
//    repeat r of an operand of element size E is element (r * repStride + (l / (32 / E)) * blkStride) * (32 / E)
//    + l % (32 / E): the narrower operand's repeat covers fewer DataBlocks (Cast.md's half -> int32_t example
//    takes srcRepStride 4).
//  - Values are what the count forms compute (cast.h, fused.h); per repeat every source lane (dst too, for the
//    forms that read it) is read before dst is written; masked-off dst lanes keep their value and state.
#pragma once
#include "opkit_emu/cast.h"
#include "opkit_emu/fused.h"
#include "opkit_emu/level0.h"

namespace opkit_emu {

// One level-0 instruction with a D destination and up to two S sources (and dst itself as a third input
// when reads_dst): f(x, y, d) -> D. Lanes per repeat: those of the larger type.
template <class D, class S, int NS, class F>
void l0_mixed(VecOp op, const char* call, bool setMask, const AscendC::LocalTensor<D>& dst, const L0Geom& gd,
              const AscendC::LocalTensor<S>* s0, const L0Geom& g0, const AscendC::LocalTensor<S>* s1, const L0Geom& g1,
              bool reads_dst, MaskArg m, int64_t repeat, SrcLoc loc, F f) {
  using Big = std::conditional_t<(sizeof(D) > sizeof(S)), D, S>;
  const L0Plan p = l0_plan<Big>(setMask, m, repeat, call, loc);
  if (p.repeats == 0) return;
  ApiCall c(Pipe::V, call, loc);
  l0_declare<D>(c, dst, p, gd, true, "dst");
  if (NS > 0) l0_declare<S>(c, *s0, p, g0, false, NS == 1 ? "src" : "src0");
  if (NS > 1) l0_declare<S>(c, *s1, p, g1, false, "src1");
  if (reads_dst) l0_declare<D>(c, dst, p, gd, false, "dst");
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<Big>(op, p);
  constexpr uint32_t lanes = kLanes<Big>;
  S a[lanes], b[lanes];
  D d[lanes], out[lanes];
  bool bad[lanes];
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = 0; l < lanes; ++l) {
      if (!lane_on(lo, hi, l)) continue;
      if (NS > 0) a[l] = s0->data()[g0.at<S>(r, l)];
      if (NS > 1) b[l] = s1->data()[g1.at<S>(r, l)];
      d[l] = dst.data()[gd.at<D>(r, l)];
      bad[l] = poisoned && ((NS > 0 && l0_poisoned(*s0, g0, r, l)) || (NS > 1 && l0_poisoned(*s1, g1, r, l)) ||
                            (reads_dst && l0_poisoned(dst, gd, r, l)));
    }
    f(out, a, b, d, lo, hi);
    for (uint32_t l = 0; l < lanes; ++l) {
      if (!lane_on(lo, hi, l)) continue;
      const uint64_t at = gd.at<D>(r, l);
      dst.data()[at] = out[l];
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(at * sizeof(D)), sizeof(D), !bad[l]);
    }
  }
}

// Elementwise over the active lanes of one repeat.
template <class D, class S, class G>
auto lanewise(G g) {
  return [g](D* out, const S* a, const S* b, const D* d, uint64_t lo, uint64_t hi) {
    constexpr uint32_t lanes = kLanes<std::conditional_t<(sizeof(D) > sizeof(S)), D, S>>;
    for (uint32_t l = 0; l < lanes; ++l)
      if (lane_on(lo, hi, l)) out[l] = g(a[l], b[l], d[l]);
  };
}

inline L0Geom bg_dst(const AscendC::BinaryRepeatParams& r) { return {r.dstBlkStride, r.dstRepStride}; }
inline L0Geom bg_src0(const AscendC::BinaryRepeatParams& r) { return {r.src0BlkStride, r.src0RepStride}; }
inline L0Geom bg_src1(const AscendC::BinaryRepeatParams& r) { return {r.src1BlkStride, r.src1RepStride}; }

// Level-0 Cast with an int4b_t operand: 128 lanes (half's), the int4b_t operand 64 elements to a DataBlock, so lane
// l of repeat r is its element (r * repStride + (l / 64) * blkStride) * 64 + l % 64 -- CANN's own sample packs 128
// half per repeat into dstRepStride 2 (cast.asc:47, Cast.md:479 `{1, 1, 2, 8}`); its count form takes a quarter of
// the half stride (kernel_operator_vec_vconv_impl.h:1002-1012, ONE_FOURTH_DEFAULT_REPEAT_STRIDE).
inline uint64_t int4_at(const L0Geom& g, uint32_t r, uint32_t l) {
  return (uint64_t(r) * g.rep + uint64_t(l / 64) * g.blk) * 64 + l % 64;
}
template <class D, class S>
void cast_int4_l0(bool setMask, const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RoundMode mode,
                  MaskArg m, int64_t repeat, const AscendC::UnaryRepeatParams& rp, SrcLoc loc) {
  const L0Plan p = l0_plan<half>(setMask, m, repeat, "Cast", loc);
  if (p.repeats == 0) return;
  const L0Geom gd = ug_dst<D>(rp), gs = ug_src<S>(rp);
  const L0Geom& g4 = is_int4_v<D> ? gd : gs;
  uint64_t ext4 = 0;
  l0_for_lanes<half>(p, [&](uint32_t r, uint32_t l) { ext4 = std::max(ext4, int4_at(g4, r, l) + 1); });
  ApiCall c(Pipe::V, "Cast", loc);
  if constexpr (is_int4_v<D>) {
    c.write(dst.m_, 0, (ext4 + 1) / 2, 8, "dst");
    l0_declare<half>(c, src, p, gs, false, "src");
  } else {
    l0_declare<half>(c, dst, p, gd, true, "dst");
    c.read(src.m_, 0, (ext4 + 1) / 2, 8, "src");
  }
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<half>(VecOp::Cast, p);
  // int4b_t dst, byte-grained shadow: per byte, which nibbles the lanes write (bits 0 / 1) and whether a source is
  // poison (bit 2). A byte is defined when no source lane of it is poison and both nibbles are written, or one is
  // and the byte was defined before (the other nibble keeps its content).
  std::vector<uint8_t> st(is_int4_v<D> ? (ext4 + 1) / 2 : 0);
  l0_for_lanes<half>(p, [&](uint32_t r, uint32_t l) {
    if constexpr (is_int4_v<D>) {
      const uint64_t at = int4_at(gd, r, l);
      dst.m_.addr[at / 2] = nibble_set(dst.m_.addr[at / 2], at, half_to_int4(src.data()[gs.at<half>(r, l)], mode));
      st[at / 2] |= uint8_t((1u << (at % 2)) | (poisoned && l0_poisoned(src, gs, r, l) ? 4u : 0u));
    } else {
      const uint64_t at4 = int4_at(gs, r, l), at = gd.at<half>(r, l);
      dst.data()[at] = from_f<half>(static_cast<float>(int8_t(nibble_get(src.m_.addr[at4 / 2], at4))));
      const bool bad = poisoned && shadow_first_hole(src.m_.ub_off() + static_cast<uint32_t>(at4 / 2), 1) >= 0;
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(at * 2), 2, !bad);
    }
  });
  for (uint32_t k = 0; k < st.size(); ++k) {
    if (!st[k]) continue;
    const uint32_t off = dst.m_.ub_off() + k;
    shadow_fill(off, 1, !(st[k] & 4) && ((st[k] & 3) == 3 || shadow_first_hole(off, 1) < 0));
  }
}

template <class D, class S>
void cast_l0(bool setMask, const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RoundMode mode,
             MaskArg m, int64_t repeat, const AscendC::UnaryRepeatParams& rp, SrcLoc loc) {
  check_cast_mode<D, S>(mode, loc);
  if constexpr (is_int4_v<D> || is_int4_v<S>) {
    cast_int4_l0<D, S>(setMask, dst, src, mode, m, repeat, rp, loc);
    return;
  } else {
  l0_mixed<D, S, 1>(VecOp::Cast, "Cast", setMask, dst, ug_dst<D>(rp), &src, ug_src<S>(rp), nullptr, L0Geom{}, false, m,
                    repeat, loc, [mode](D* out, const S* a, const S*, const D*, uint64_t lo, uint64_t hi) {
                      constexpr uint32_t lanes = kLanes<std::conditional_t<(sizeof(D) > sizeof(S)), D, S>>;
                      S in[lanes];
                      uint32_t n = 0, idx[lanes];
                      for (uint32_t l = 0; l < lanes; ++l)
                        if (lane_on(lo, hi, l)) { in[n] = a[l]; idx[n++] = l; }
                      D res[lanes];
                      cast_values<D, S>(res, in, n, mode);
                      for (uint32_t k = 0; k < n; ++k) out[idx[k]] = res[k];
                    });
  }
}

}  // namespace opkit_emu

namespace AscendC {

template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(cast_modes<T, U>() != 0, "opkit emulator: Cast between these element types does not exist on this chip");
  using Big = std::conditional_t<(sizeof(T) > sizeof(U)), T, U>;
  cast_l0<T, U>(isSetMask, dst, src, roundMode, mask_bits(mask, kLanes<Big>), repeatTime, repeatParams, loc);
}
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(cast_modes<T, U>() != 0, "opkit emulator: Cast between these element types does not exist on this chip");
  cast_l0<T, U>(isSetMask, dst, src, roundMode, MaskArg(mask), repeatTime, repeatParams, loc);
}

// Axpy: dst = scalar * src + dst (A2: half, float, half -> float).
#define OPKIT_EMU_L0_AXPY(MASK_T, MASK_ARG)                                                                        \
  template <typename T, typename U, bool isSetMask = true>                                                          \
  void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, MASK_T mask,                \
            const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {                           \
    using namespace opkit_emu;                                                                                      \
    static_assert(is_axpy_pair<T, U>, "opkit emulator: Axpy on A2: half->half, float->float, half->float");       \
    using Big = std::conditional_t<(sizeof(T) > sizeof(U)), T, U>;                                                  \
    (void)sizeof(Big);                                                                                              \
    const float s = to_f(scalarValue);                                                                              \
    l0_mixed<T, U, 1>(VecOp::Other, "Axpy", isSetMask, dst, ug_dst<T>(repeatParams), &src, ug_src<U>(repeatParams), \
                      nullptr, L0Geom{}, true, MASK_ARG, repeatTime, loc,                                          \
                      lanewise<T, U>([s](U x, U, T d) {                                                             \
                        return from_f<T>(fadd(fmul(to_f(x), s), to_f(d)));                                          \
                      }));                                                                                          \
  }
OPKIT_EMU_L0_AXPY(uint64_t, MaskArg(mask))
OPKIT_EMU_L0_AXPY(uint64_t*, mask_bits(mask, kLanes<Big>))
OPKIT_EMU_L0_AXPY(const uint64_t*, mask_bits(mask, kLanes<Big>))
#undef OPKIT_EMU_L0_AXPY

// MulAddDst: dst = src0 * src1 + dst (A2: half, float, half -> float).
#define OPKIT_EMU_L0_MULADDDST(MASK_T, MASK_ARG)                                                                   \
  template <typename T, typename U, bool isSetMask = true>                                                          \
  void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1, MASK_T mask,   \
                 const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) {                     \
    using namespace opkit_emu;                                                                                      \
    static_assert(is_axpy_pair<T, U>, "opkit emulator: MulAddDst on A2: half->half, float->float, half->float");  \
    using Big = std::conditional_t<(sizeof(T) > sizeof(U)), T, U>;                                                  \
    (void)sizeof(Big);                                                                                              \
    l0_mixed<T, U, 2>(VecOp::Other, "MulAddDst", isSetMask, dst, bg_dst(repeatParams), &src0, bg_src0(repeatParams), \
                      &src1, bg_src1(repeatParams), true, MASK_ARG, repeatTime, loc,                               \
                      lanewise<T, U>([](U x, U y, T d) {                                                            \
                        return from_f<T>(fadd(fmul(to_f(x), to_f(y)), to_f(d)));                                    \
                      }));                                                                                          \
  }
OPKIT_EMU_L0_MULADDDST(uint64_t, MaskArg(mask))
OPKIT_EMU_L0_MULADDDST(const uint64_t*, mask_bits(mask, kLanes<Big>))
#undef OPKIT_EMU_L0_MULADDDST

// Same-type compound instructions (fused.h for the formulas and types).
#define OPKIT_EMU_L0_FUSED(NAME, PRED, MSG, READS_DST, EXPR)                                                       \
  template <typename T, bool isSetMask = true>                                                                      \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const uint64_t mask[], \
            const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) {                         \
    using namespace opkit_emu;                                                                                      \
    static_assert(PRED<T>, "opkit emulator: " #NAME " supports " MSG " on this chip");                           \
    l0_mixed<T, T, 2>(VecOp::Other, #NAME, isSetMask, dst, bg_dst(repeatParams), &src0, bg_src0(repeatParams),     \
                      &src1, bg_src1(repeatParams), READS_DST, mask_bits(mask, kLanes<T>), repeatTime, loc,        \
                      lanewise<T, T>([](T x, T y, T d) { (void)d; return EXPR; }));                               \
  }                                                                                                                 \
  template <typename T, bool isSetMask = true>                                                                      \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,      \
            const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) {                         \
    using namespace opkit_emu;                                                                                      \
    static_assert(PRED<T>, "opkit emulator: " #NAME " supports " MSG " on this chip");                           \
    l0_mixed<T, T, 2>(VecOp::Other, #NAME, isSetMask, dst, bg_dst(repeatParams), &src0, bg_src0(repeatParams),     \
                      &src1, bg_src1(repeatParams), READS_DST, MaskArg(mask), repeatTime, loc,                     \
                      lanewise<T, T>([](T x, T y, T d) { (void)d; return EXPR; }));                               \
  }
OPKIT_EMU_L0_FUSED(FusedMulAdd, is_hf_t, "half and float", true, from_f<T>(fadd(fmul(to_f(x), to_f(d)), to_f(y))))
OPKIT_EMU_L0_FUSED(FusedMulAddRelu, is_hf_t, "half and float", true,
                   from_f<T>(relu_f(fadd(fmul(to_f(x), to_f(d)), to_f(y)))))
OPKIT_EMU_L0_FUSED(MulAddRelu, is_hf_t, "half and float", true,
                   from_f<T>(relu_f(fadd(fmul(to_f(x), to_f(d)), to_f(y)))))
OPKIT_EMU_L0_FUSED(AddRelu, is_addrelu_t, "int16_t, half and float", false, (op_relu<T, 1>(x, y)))
OPKIT_EMU_L0_FUSED(SubRelu, is_addrelu_t, "int16_t, half and float", false, (op_relu<T, -1>(x, y)))
#undef OPKIT_EMU_L0_FUSED

}  // namespace AscendC
