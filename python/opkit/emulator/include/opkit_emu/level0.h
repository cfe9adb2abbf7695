// Level-0 ("high-dimensional split") vector forms: a mask per 256-byte repeat, repeatTime repeats, and
// block / repeat strides in 32-byte DataBlocks (BinaryRepeatParams / UnaryRepeatParams); the vector mask
// register (SetVectorMask, SetMaskCount / SetMaskNorm, ResetMask) for isSetMask=false.
// Doc: asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/SIMD计算说明/{高维切分.md, 掩码/接口内设置Mask.md},
// 掩码操作/{SetVectorMask,SetMaskCount,SetMaskNorm,ResetMask}.md (mirror-cann/asc-devkit 7359511d).
//  - Normal mode: the mask selects lanes of every repeat (bit i = lane i; 16-bit types use mask[0] for
//    lanes 0..63 and mask[1] for 64..127; the continuous form is the first `mask` lanes).
//  - Counter mode: the mask (low 64 bits) is the total element count; repeatTime is ignored and the
//    repeats are inferred (the last one partial).
//  - Masked-off lanes of dst keep their old value (and, here, their init state).
#pragma once
#include <array>

#include "opkit_emu/vector.h"

namespace AscendC {

// The template configuration of the scalar-position-flexible binary forms (asc-devkit 82b89a15
// include/basic_api/kernel_struct_binary.h:37-43). The structs are declared for every chip; the forms that take
// them are Ascend 950's (kernel_operator_vec_binary_scalar_intf.h:85-102 under __NPU_ARCH__ 3510), so on A2 they
// are only names a kernel may declare or pass along.
struct BinaryConfig {
  int8_t scalarTensorIndex = 1;
};
constexpr BinaryConfig DEFAULT_BINARY_CONFIG = {1};
struct BinaryDefaultType {};

struct BinaryRepeatParams {
  uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
  uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
  bool repeatStrideMode = false, strideSizeMode = false;
  BinaryRepeatParams() {}
  BinaryRepeatParams(uint8_t db, uint8_t s0b, uint8_t s1b, uint8_t dr, uint8_t s0r, uint8_t s1r)
      : dstBlkStride(db), src0BlkStride(s0b), src1BlkStride(s1b), dstRepStride(dr), src0RepStride(s0r),
        src1RepStride(s1r) {}
};

struct UnaryRepeatParams {
  uint16_t dstBlkStride = 1, srcBlkStride = 1;
  uint8_t dstRepStride = 8, srcRepStride = 8;
  bool repeatStrideMode = false, strideSizeMode = false, halfBlock = false;
  UnaryRepeatParams() {}
  UnaryRepeatParams(uint16_t db, uint16_t sb, uint8_t dr, uint8_t sr)
      : dstBlkStride(db), srcBlkStride(sb), dstRepStride(dr), srcRepStride(sr) {}
};

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t FULL_MASK = ~0ull;

inline void SetMaskCount() { opkit_emu::ctx().mask_counter = true; }
inline void SetMaskNorm() { opkit_emu::ctx().mask_counter = false; }
// Default mask: every lane (Normal mode).
inline void ResetMask() {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  c.mask_lo = c.mask_hi = ~0ull;
}
template <class T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow) {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  c.mask_hi = maskHigh;
  c.mask_lo = maskLow;
}
// Continuous form: the first len lanes (Normal) or len elements (Counter).
template <class T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len) {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  if (mode == MaskMode::COUNTER || c.mask_counter) { c.mask_hi = 0; c.mask_lo = static_cast<uint64_t>(len); return; }
  const int32_t l = len < 0 ? 0 : len;
  c.mask_lo = l >= 64 ? ~0ull : ((1ull << l) - 1);
  c.mask_hi = l >= 128 ? ~0ull : (l > 64 ? ((1ull << (l - 64)) - 1) : 0);
}

}  // namespace AscendC

namespace opkit_emu {

template <class T> inline constexpr uint32_t kLanes = kRepeat / sizeof(T);  // elements per repeat
template <class T> inline constexpr uint32_t kPerBlk = kBlk / sizeof(T);    // elements per DataBlock

// The mask argument of a level-0 call: continuous (a lane count) or bitwise (mask[0], mask[1]).
struct MaskArg {
  uint64_t lo = 0, hi = 0;
  bool bits = false;
  MaskArg(uint64_t n) : lo(n) {}
  MaskArg(const uint64_t* m) : lo(m[0]), hi(m[1]), bits(true) {}
  MaskArg(uint64_t l, uint64_t h, bool b) : lo(l), hi(h), bits(b) {}
};
// 32-bit operands pass a one-element array (the docs' "array length 1"): mask[1] is not read.
inline MaskArg mask_bits(const uint64_t* m, uint32_t lanes) { return MaskArg(m[0], lanes > 64 ? m[1] : 0, true); }

// What one level-0 call covers: repeats, and the lane mask of every repeat (the last may differ).
struct L0Plan {
  uint32_t repeats = 0;
  uint64_t lo = 0, hi = 0;        // lanes of every repeat but the last
  uint64_t last_lo = 0, last_hi = 0;
};
inline void lanes_to_mask(uint64_t n, uint64_t& lo, uint64_t& hi) {
  lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
  hi = n >= 128 ? ~0ull : (n > 64 ? ((1ull << (n - 64)) - 1) : 0);
}

// Resolves mask mode, isSetMask and the argument into a plan; validates the documented ranges.
template <class T>
L0Plan l0_plan(bool isSetMask, MaskArg m, int64_t repeatTime, const char* call, SrcLoc loc) {
  BlockCtx& c = ctx();
  constexpr uint32_t lanes = kLanes<T>;
  L0Plan p;
  if (repeatTime < 0 || repeatTime > 255)
    fail("vector-mask", call, loc, strf("repeatTime %lld is outside [0, 255]", (long long)repeatTime));
  if (!isSetMask) m = MaskArg(c.mask_lo, c.mask_hi, !c.mask_counter);
  if (c.mask_counter) {  // the low 64 bits are the element count; repeats are inferred
    const uint64_t n = m.lo;
    p.repeats = static_cast<uint32_t>((n + lanes - 1) / lanes);
    lanes_to_mask(lanes, p.lo, p.hi);
    lanes_to_mask(n - (p.repeats ? (p.repeats - 1) * uint64_t(lanes) : 0), p.last_lo, p.last_hi);
    return p;
  }
  // 掩码.md: a continuous mask above the lanes of a repeat counts as all of them, 0 selects none (a NOP);
  // a bit mask selects exactly its bits (all zero: none).
  if (isSetMask) {  // the instruction leaves its mask in the register
    if (m.bits) { c.mask_lo = m.lo; c.mask_hi = m.hi; }
    else lanes_to_mask(std::min<uint64_t>(m.lo, lanes), c.mask_lo, c.mask_hi);
  }
  p.repeats = static_cast<uint32_t>(repeatTime);
  if (m.bits) { p.lo = m.lo; p.hi = lanes > 64 ? m.hi : 0; }
  else lanes_to_mask(std::min<uint64_t>(m.lo, lanes), p.lo, p.hi);
  if (lanes < 64) p.lo &= (1ull << lanes) - 1;
  if (p.lo == 0 && p.hi == 0) p.repeats = 0;
  p.last_lo = p.lo;
  p.last_hi = p.hi;
  return p;
}
inline bool lane_on(uint64_t lo, uint64_t hi, uint32_t l) { return l < 64 ? (lo >> l) & 1 : (hi >> (l - 64)) & 1; }

// Operand geometry: element index of lane l in repeat r.
struct L0Geom {
  uint32_t blk, rep;  // strides in DataBlocks
  template <class T> uint64_t at(uint32_t r, uint32_t l) const {
    return (uint64_t(r) * rep + uint64_t(l / kPerBlk<T>) * blk) * kPerBlk<T> + l % kPerBlk<T>;
  }
};

// Highest element touched + 1 (for the bounds check), over every active lane.
template <class T>
uint64_t l0_extent(const L0Plan& p, const L0Geom& g) {
  uint64_t end = 0;
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = kLanes<T>; l-- > 0;)
      if (lane_on(lo, hi, l)) { end = std::max(end, g.at<T>(r, l) + 1); break; }
  }
  return end;
}

// Visits each active lane as (repeat, lane) in order; every DataBlock's run of lanes is contiguous.
template <class T, class F>
void l0_for_lanes(const L0Plan& p, F f) {
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l)) f(r, l);
  }
}

// Declares one operand on the call's hook (api_call.h): its span up to the last active lane is checked
// (live, aligned, in bounds) and tracked for pipe hazards. Poison is handled lane by lane (Flow::Manual).
template <class T>
void l0_declare(ApiCall& c, const AscendC::LocalTensor<T>& t, const L0Plan& p, const L0Geom& g, bool write,
                const char* name) {
  const uint64_t ext = l0_extent<T>(p, g);
  if (write) c.write(t.m_, 0, ext, 8 * sizeof(T), name);
  else c.read(t.m_, 0, ext, 8 * sizeof(T), name);
}
template <class T>
inline bool l0_poisoned(const AscendC::LocalTensor<T>& t, const L0Geom& g, uint32_t r, uint32_t l) {
  return shadow_first_hole(t.m_.ub_off() + static_cast<uint32_t>(g.at<T>(r, l) * sizeof(T)), sizeof(T)) >= 0;
}
// Poison of each active lane (in l0_for_lanes order): any source lane at the same (repeat, lane) is poison.
template <class T, size_t NS>
std::vector<uint8_t> l0_lane_poison(const std::array<const AscendC::LocalTensor<T>*, NS>& src,
                                    const std::array<L0Geom, NS>& gs, const L0Plan& p) {
  std::vector<uint8_t> bad;
  l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
    bool b = false;
    for (size_t k = 0; k < NS; ++k) b = b || l0_poisoned(*src[k], gs[k], r, l);
    bad.push_back(b);
  });
  return bad;
}
// Marks dst's active lanes defined, or poison where `bad` says so (masked-off lanes keep their state).
template <class T>
void l0_mark(const AscendC::LocalTensor<T>& t, const L0Plan& p, const L0Geom& g, const std::vector<uint8_t>* bad) {
  size_t i = 0;
  l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
    shadow_fill(t.m_.ub_off() + static_cast<uint32_t>(g.at<T>(r, l) * sizeof(T)), sizeof(T), !(bad && (*bad)[i]));
    ++i;
  });
}
// Older per-operand form, kept for headers not yet on the hook (gather.h, compare_select.h): its own V-pipe
// access (hazards tracked); sources must be fully defined on every active lane (strict, no poison flow).
template <class T>
void l0_operand(const AscendC::LocalTensor<T>& t, const L0Plan& p, const L0Geom& g, bool is_src, const char* call,
                SrcLoc loc, const char* name) {
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, t, p, g, !is_src, name);
  if (c.commit(Flow::Manual) && is_src)
    l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
      t.m_.check_initialized(static_cast<uint32_t>(g.at<T>(r, l) * sizeof(T)), sizeof(T), sizeof(T), call, loc, name);
    });
}
template <class T>
void l0_mark(const AscendC::LocalTensor<T>& t, const L0Plan& p, const L0Geom& g) { l0_mark(t, p, g, nullptr); }

template <class T>
inline void l0_count(VecOp op, const L0Plan& p) {
  BlockStats& s = ctx().stats;
  s.op_calls[static_cast<int>(op)]++;
  uint64_t n = 0;
  l0_for_lanes<T>(p, [&](uint32_t, uint32_t) { ++n; });
  s.op_elems[static_cast<int>(op)] += n;
  s.vector_elems += n;
  s.vector_repeats += p.repeats;
}

// One level-0 instruction over NS sources: per repeat, every source lane is read before dst is written
// (so in-place and overlapping forms behave as the hardware's repeat-at-a-time pipeline).
template <class T, size_t NS, class F>
void l0_apply(VecOp op, const char* call, const AscendC::LocalTensor<T>& dst, const L0Geom& gd,
              const std::array<const AscendC::LocalTensor<T>*, NS>& src, const std::array<L0Geom, NS>& gs,
              const L0Plan& p, F f, SrcLoc loc) {
  if (p.repeats == 0) return;
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, dst, p, gd, true, "dst");
  static const char* names[] = {"src0", "src1", "src2"};
  for (size_t k = 0; k < NS; ++k) l0_declare(c, *src[k], p, gs[k], false, NS == 1 ? "src" : names[k]);
  const bool poisoned = c.commit(Flow::Manual);
  std::vector<uint8_t> bad;
  if (poisoned) bad = l0_lane_poison<T, NS>(src, gs, p);  // before dst is written (in-place forms)
  l0_count<T>(op, p);
  T in[NS ? NS : 1][kLanes<T>];
  T* d = dst.data();
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (size_t k = 0; k < NS; ++k)
      for (uint32_t l = 0; l < kLanes<T>; ++l)
        if (lane_on(lo, hi, l)) in[k][l] = src[k]->data()[gs[k].template at<T>(r, l)];
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l)) {
        if constexpr (NS == 0) d[gd.at<T>(r, l)] = f();
        else if constexpr (NS == 1) d[gd.at<T>(r, l)] = f(in[0][l]);
        else d[gd.at<T>(r, l)] = f(in[0][l], in[1][l]);
      }
  }
  l0_mark(dst, p, gd, poisoned ? &bad : nullptr);
}

template <class T>
inline L0Geom ug_dst(const AscendC::UnaryRepeatParams& r) { return {r.dstBlkStride, r.dstRepStride}; }
template <class T>
inline L0Geom ug_src(const AscendC::UnaryRepeatParams& r) { return {r.srcBlkStride, r.srcRepStride}; }

template <class Op, class T>
void l0_binary(VecOp op, const char* call, bool setMask, const AscendC::LocalTensor<T>& dst,
               const AscendC::LocalTensor<T>& a, const AscendC::LocalTensor<T>& b, MaskArg m, int64_t repeat,
               const AscendC::BinaryRepeatParams& rp, SrcLoc loc) {
  const L0Plan p = l0_plan<T>(setMask, m, repeat, call, loc);
  l0_apply<T, 2>(op, call, dst, {rp.dstBlkStride, rp.dstRepStride}, {&a, &b},
                 {L0Geom{rp.src0BlkStride, rp.src0RepStride}, L0Geom{rp.src1BlkStride, rp.src1RepStride}}, p,
                 [](T x, T y) { return bin_elem<Op, T>(x, y); }, loc);
}
template <class Op, class T>
void l0_unary(VecOp op, const char* call, bool setMask, const AscendC::LocalTensor<T>& dst,
              const AscendC::LocalTensor<T>& a, MaskArg m, int64_t repeat, const AscendC::UnaryRepeatParams& rp,
              SrcLoc loc) {
  const L0Plan p = l0_plan<T>(setMask, m, repeat, call, loc);
  l0_apply<T, 1>(op, call, dst, ug_dst<T>(rp), {&a}, {ug_src<T>(rp)}, p, [](T x) { return un_elem<Op, T>(x); }, loc);
}
template <class Op, class T>
void l0_scalar(VecOp op, const char* call, bool setMask, const AscendC::LocalTensor<T>& dst,
               const AscendC::LocalTensor<T>& a, T s, MaskArg m, int64_t repeat, const AscendC::UnaryRepeatParams& rp,
               SrcLoc loc) {
  const L0Plan p = l0_plan<T>(setMask, m, repeat, call, loc);
  const float fs = to_f(s);
  if constexpr (kScalarPlain<Op, T>) {  // a scalar that is not NaN: the plain operation (vector.h scalar_loop)
    if (fs == fs) {
      const float fo = opaque_scalar(fs);
      const T so = scalar_as<T>(s, fo);
      return l0_apply<T, 1>(op, call, dst, ug_dst<T>(rp), {&a}, {ug_src<T>(rp)}, p,
                            [so, fo](T x) { return scalar_elem<typename PlainOf<Op>::type, T>(x, so, fo); }, loc);
    }
  }
  l0_apply<T, 1>(op, call, dst, ug_dst<T>(rp), {&a}, {ug_src<T>(rp)}, p,
                 [s, fs](T x) { return scalar_elem<Op, T>(x, s, fs); }, loc);
}

}  // namespace opkit_emu

namespace AscendC {

// Binary: Add Sub Mul Div Max Min (and And/Or in bitwise.h), both mask forms.
#define OPKIT_EMU_L0_BINARY(NAME, OP, PRED)                                                                   \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask, \
            const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) {                   \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    l0_binary<OP, T>(VecOp::NAME, #NAME, isSetMask, dst, src0, src1, MaskArg(mask), repeatTime, repeatParams, loc); \
  }                                                                                                          \
  template <class T, bool isSetMask = true, OPKIT_NOLOC>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask, \
            const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_NOLOC_PARAM) {           \
    NAME<T, isSetMask>(dst, src0, src1, mask, repeatTime, repeatParams, OPKIT_PTR_LOC);                      \
  }                                                                                                          \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,              \
            const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) { \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    l0_binary<OP, T>(VecOp::NAME, #NAME, isSetMask, dst, src0, src1, mask_bits(mask, kLanes<T>), repeatTime,  \
                     repeatParams, loc);                                                                     \
  }
OPKIT_EMU_L0_BINARY(Add, OpAdd, is_arith_t)
OPKIT_EMU_L0_BINARY(Sub, OpSub, is_arith_t)
OPKIT_EMU_L0_BINARY(Mul, OpMul, is_arith_t)
OPKIT_EMU_L0_BINARY(Max, OpMax, is_arith_t)
OPKIT_EMU_L0_BINARY(Min, OpMin, is_arith_t)
OPKIT_EMU_L0_BINARY(Div, OpDiv, is_fmath_t)

#define OPKIT_EMU_L0_UNARY(NAME, OP, PRED)                                                                    \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTime,    \
            const UnaryRepeatParams& repeatParams, OPKIT_LOC) {                                              \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    l0_unary<OP, T>(VecOp::NAME, #NAME, isSetMask, dst, src, MaskArg(mask), repeatTime, repeatParams, loc);  \
  }                                                                                                          \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                     \
            const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {                    \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    l0_unary<OP, T>(VecOp::NAME, #NAME, isSetMask, dst, src, mask_bits(mask, kLanes<T>), repeatTime,         \
                    repeatParams, loc);                                                                      \
  }
OPKIT_EMU_L0_UNARY(Exp, OpExp, is_fmath_t)
OPKIT_EMU_L0_UNARY(Ln, OpLn, is_fmath_t)
OPKIT_EMU_L0_UNARY(Abs, OpAbs, is_fmath_t)
OPKIT_EMU_L0_UNARY(Sqrt, OpSqrt, is_fmath_t)
OPKIT_EMU_L0_UNARY(Rsqrt, OpRsqrt, is_fmath_t)
OPKIT_EMU_L0_UNARY(Reciprocal, OpRecip, is_fmath_t)
OPKIT_EMU_L0_UNARY(Relu, OpRelu, is_relu_t)

#define OPKIT_EMU_L0_SCALAR(NAME, OP, PRED)                                                                   \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,       \
            const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {                    \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    l0_scalar<OP, T>(VecOp::NAME, #NAME, isSetMask, dst, src, scalarValue, MaskArg(mask), repeatTime,        \
                     repeatParams, loc);                                                                     \
  }                                                                                                          \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const uint64_t mask[], \
            const uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {                    \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    l0_scalar<OP, T>(VecOp::NAME, #NAME, isSetMask, dst, src, scalarValue, mask_bits(mask, kLanes<T>),       \
                     repeatTime, repeatParams, loc);                                                         \
  }
OPKIT_EMU_L0_SCALAR(Adds, OpAdd, is_arith_t)
OPKIT_EMU_L0_SCALAR(Muls, OpMul, is_arith_t)
OPKIT_EMU_L0_SCALAR(Maxs, OpMax, is_arith_t)
OPKIT_EMU_L0_SCALAR(Mins, OpMin, is_arith_t)

// LeakyRelu level-0: x >= 0 ? x : alpha * x.
struct OpLeaky { template <class F> static OPKIT_EMU_INLINE F ap(F x, F a) { return x >= F(0) ? x : fmul(x, a); } };
OPKIT_EMU_L0_SCALAR(LeakyRelu, OpLeaky, is_fmath_t)
#undef OPKIT_EMU_L0_SCALAR
#undef OPKIT_EMU_L0_UNARY

// Duplicate level-0: Duplicate(dst, scalar, mask, repeatTime, dstBlockStride, dstRepeatStride).
template <class T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_dup_t<T>, "opkit emulator: Duplicate does not support this element type on this chip");
  const L0Plan p = l0_plan<T>(isSetMask, MaskArg(mask), repeatTime, "Duplicate", loc);
  l0_apply<T, 0>(VecOp::Duplicate, "Duplicate", dst, {dstBlockStride, dstRepeatStride}, {}, {}, p,
                 [scalarValue]() { return scalarValue; }, loc);
}
template <class T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[], const uint8_t repeatTime,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_dup_t<T>, "opkit emulator: Duplicate does not support this element type on this chip");
  const L0Plan p = l0_plan<T>(isSetMask, mask_bits(mask, kLanes<T>), repeatTime, "Duplicate", loc);
  l0_apply<T, 0>(VecOp::Duplicate, "Duplicate", dst, {dstBlockStride, dstRepeatStride}, {}, {}, p,
                 [scalarValue]() { return scalarValue; }, loc);
}

// Brcb: each of 8 consecutive src elements per repeat fills one DataBlock of dst.
// Doc: 数据填充/Brcb.md (mirror-cann/asc-devkit 7359511d).
struct BrcbRepeatParams {
  uint16_t dstBlkStride = 1, dstRepStride = 8;
  uint8_t src1BlkStride = 0, src1RepStride = 0;
  bool repeatStrideMode = false, strideSizeMode = false;
  BrcbRepeatParams() {}
  BrcbRepeatParams(uint16_t db, uint16_t dr) : dstBlkStride(db), dstRepStride(dr) {}
};

template <class T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
          const BrcbRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_dup_t<T>, "opkit emulator: Brcb supports int16/uint16/half/bfloat16/int32/uint32/float");
  if (repeatTime == 0) return;
  constexpr uint32_t pb = kPerBlk<T>;
  const uint32_t n = repeatTime * 8u;
  const uint64_t last = (uint64_t(repeatTime - 1) * repeatParams.dstRepStride + 7ull * repeatParams.dstBlkStride) * pb + pb;
  ApiCall c(Pipe::V, "Brcb", loc);
  c.src(src, n).write(dst.m_, 0, last, 8 * sizeof(T), "dst");
  const bool poisoned = c.commit(Flow::Manual);
  BlockStats& s = ctx().stats;
  s.op_calls[static_cast<int>(VecOp::Other)]++;
  s.op_elems[static_cast<int>(VecOp::Other)] += uint64_t(n) * pb;
  s.vector_elems += uint64_t(n) * pb;
  s.vector_repeats += repeatTime;
  for (uint32_t r = 0; r < repeatTime; ++r)
    for (uint32_t j = 0; j < 8; ++j) {
      const T v = src.data()[r * 8 + j];
      const uint64_t at = (uint64_t(r) * repeatParams.dstRepStride + uint64_t(j) * repeatParams.dstBlkStride) * pb;
      for (uint32_t k = 0; k < pb; ++k) dst.data()[at + k] = v;
      const bool bad = poisoned && ApiCall::lane_poisoned(c.operand(0), r * 8 + j);
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(at * sizeof(T)), kBlk, !bad);
    }
}

}  // namespace AscendC
