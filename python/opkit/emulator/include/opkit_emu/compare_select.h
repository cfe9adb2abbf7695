// Compare / Compares / CompareScalar (bitmask out) and Select (bitmask in), count and level-0 forms.
// Doc: asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/比较与选择/{Compare,Compares,Select}.md
// (mirror-cann/asc-devkit 7359511d) and facts sheet §3 "Compare and Select":
//  - the bitmask holds one bit per element, little-endian within a byte, whatever dst's integer type (the docs
//    list uint8_t/int8_t for U, but CANN's implementation takes any U and the instruction writes bytes: public
//    kernels pass LocalTensor<uint16_t>, which builds and runs on the device); count forms need count x
//    sizeof(T) to be a multiple of 256 bytes; A2: half/float all modes, int32_t EQ only;
//  - level-0 Compare(s): repeat r's bits start at bit r * 256/sizeof(T) of dst (the dst strides of the
//    repeat parameters are "reserved, no effect" on A2); bits of masked-off lanes are left as they were;
//  - Select: bit 1 takes src0, 0 takes src1; VSEL_CMPMASK_SPR reuses the first 256/sizeof(T) bits of
//    selMask in every repeat, VSEL_TENSOR_SCALAR_MODE / VSEL_TENSOR_TENSOR_MODE consume it continuously;
//    masked-off dst lanes keep their value.
#pragma once
#include <cstring>

#include "opkit_emu/level0.h"

namespace AscendC {
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
}  // namespace AscendC

namespace opkit_emu {
template <class T> inline constexpr bool is_cmp_t =
    std::is_same<T, half>::value || std::is_same<T, float>::value || std::is_same<T, int32_t>::value;
template <class T> inline constexpr bool is_sel_t = std::is_same<T, half>::value || std::is_same<T, float>::value;

template <class T>
OPKIT_EMU_HOT void compare_loop(uint8_t* d, const T* a, const T* b, uint32_t n, AscendC::CMPMODE m) {
  for (uint32_t byte = 0; byte < n / 8; ++byte) {
    uint8_t bits = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      using C = std::conditional_t<std::is_integral<T>::value, T, float>;  // integers compare exactly
      C x, y;
      if constexpr (std::is_integral<T>::value) { x = a[byte * 8 + k]; y = b[byte * 8 + k]; }
      else { x = to_f(a[byte * 8 + k]); y = to_f(b[byte * 8 + k]); }
      bool r;
      switch (m) {
        case AscendC::CMPMODE::LT: r = x < y; break;
        case AscendC::CMPMODE::GT: r = x > y; break;
        case AscendC::CMPMODE::EQ: r = x == y; break;
        case AscendC::CMPMODE::LE: r = x <= y; break;
        case AscendC::CMPMODE::GE: r = x >= y; break;
        default: r = x != y; break;
      }
      bits |= static_cast<uint8_t>(r) << k;
    }
    d[byte] = bits;
  }
}
// mode 0 (VSEL_CMPMASK_SPR) reuses the first `lanes` bits of the mask in every 256-byte repeat;
// modes 1 and 2 consume the mask continuously.
template <class T>
OPKIT_EMU_HOT void select_loop(T* d, const uint8_t* mask, const T* a, const T* b, T s, bool scalar, uint32_t n,
                               uint32_t wrap) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t k = wrap ? i % wrap : i;
    bool take0 = (mask[k >> 3] >> (k & 7)) & 1;
    d[i] = take0 ? a[i] : (scalar ? s : b[i]);
  }
}
}  // namespace opkit_emu

namespace AscendC {

template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_cmp_t<T>, "opkit emulator: Compare supports half, float and int32_t (EQ only) on this chip");
  static_assert(std::is_integral<U>::value, "opkit emulator: Compare writes a bitmask: dst must be an integer LocalTensor");
  if constexpr (std::is_same<T, int32_t>::value)
    if (cmpMode != CMPMODE::EQ) fail("dtype-unsupported", "Compare", loc, "int32_t Compare supports CMPMODE::EQ only");
  if (!vec_prologue<T>(VecOp::Compare, "Compare", count, loc)) return;
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (bytes % kRepeat != 0)
    fail("compare-length", "Compare", loc,
         strf("count %u x %zu bytes = %llu bytes is not a multiple of 256 bytes; the NPU would not compute the last "
              "%llu bytes",
              count, sizeof(T), (unsigned long long)bytes, (unsigned long long)(bytes % kRepeat)));
  ApiCall(Pipe::V, "Compare", loc)
      .write(dst.m_, 0, count, 1, "dst")  // one bit per element
      .src(src0, count, "src0")
      .src(src1, count, "src1")
      .commit();
  compare_loop<T>(reinterpret_cast<uint8_t*>(dst.data()), src0.data(), src1.data(), count, cmpMode);
}

namespace detail {
template <class T, class U>
void select_impl(const LocalTensor<T>& dst, const LocalTensor<U>& mask, const LocalTensor<T>* src0, const LocalTensor<T>* src1,
                 T scalar, SELMODE mode, uint32_t count, opkit_emu::SrcLoc loc) {
  using namespace opkit_emu;
  static_assert(is_sel_t<T>, "opkit emulator: Select supports half and float on this chip");
  const bool scalar_mode = mode == SELMODE::VSEL_TENSOR_SCALAR_MODE;
  if (!scalar_mode && !src1)
    fail("dtype-unsupported", "Select", loc, "VSEL_TENSOR_TENSOR_MODE and VSEL_CMPMASK_SPR need a tensor src1");
  // mode 0 reads only the first 256/sizeof(T) mask bits, again for every repeat (Select.md)
  const uint32_t wrap = mode == SELMODE::VSEL_CMPMASK_SPR ? kRepeat / sizeof(T) : 0;
  if (!vec_prologue<T>(VecOp::Select, "Select", count, loc)) return;
  const uint32_t mask_lanes = wrap ? std::min(count, wrap) : count;
  ApiCall c(Pipe::V, "Select", loc);
  c.read(mask.m_, 0, mask_lanes, 1, "selMask").dst(dst, count).src(*src0, count, "src0");
  if (!scalar_mode) c.src(*src1, count, "src1");
  if (mask_lanes == count) {
    c.commit();
  } else if (c.commit(Flow::Manual)) {  // the mask repeats every `wrap` lanes: lane i takes mask bit i % wrap
    std::vector<uint8_t> bad(count);
    for (uint32_t i = 0; i < count; ++i)
      bad[i] = ApiCall::lane_poisoned(c.operand(0), i % wrap) || ApiCall::lane_poisoned(c.operand(2), i) ||
               (!scalar_mode && ApiCall::lane_poisoned(c.operand(3), i));
    for (uint32_t i = 0; i < count; ++i) shadow_fill(dst.m_.ub_off() + i * sizeof(T), sizeof(T), !bad[i]);
  } else {
    ApiCall::mark_defined(c.operand(1));
  }
  select_loop<T>(dst.data(), reinterpret_cast<const uint8_t*>(mask.data()), src0->data(),
                 scalar_mode ? nullptr : src1->data(), scalar, scalar_mode, count, wrap);
}
}  // namespace detail

template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, OPKIT_LOC) {
  detail::select_impl<T, U>(dst, selMask, &src0, &src1, T{}, selMode, count, loc);
}
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
            SELMODE selMode, uint32_t count, OPKIT_LOC) {
  detail::select_impl<T, U>(dst, selMask, &src0, nullptr, src1, selMode, count, loc);
}

}  // namespace AscendC

namespace opkit_emu {

template <class T>
inline bool cmp_elem(T a, T b, AscendC::CMPMODE m) {
  using C = std::conditional_t<std::is_integral<T>::value, T, float>;
  C x, y;
  if constexpr (std::is_integral<T>::value) { x = a; y = b; }
  else { x = to_f(a); y = to_f(b); }
  switch (m) {
    case AscendC::CMPMODE::LT: return x < y;
    case AscendC::CMPMODE::GT: return x > y;
    case AscendC::CMPMODE::EQ: return x == y;
    case AscendC::CMPMODE::LE: return x <= y;
    case AscendC::CMPMODE::GE: return x >= y;
    default: return x != y;
  }
}

template <class T>
inline void cmp_mode_check(AscendC::CMPMODE m, const char* call, SrcLoc loc) {
  static_assert(is_cmp_t<T>, "opkit emulator: Compare supports half, float and int32_t (EQ only) on this chip");
  if constexpr (std::is_same<T, int32_t>::value)
    if (m != AscendC::CMPMODE::EQ) fail("dtype-unsupported", call, loc, "int32_t compares support CMPMODE::EQ only");
}

// Level-0 compare of src0 against src1 (a tensor) or a scalar: one bit per lane into dst. A dst bit is poison
// when a source lane it compares is (computing on poison is legal: only its escape to GM or the scalar unit fails).
template <class T, class U>
void l0_compare(const char* call, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& a, L0Geom ga,
                const AscendC::LocalTensor<T>* b, L0Geom gb, T s, AscendC::CMPMODE mode, const L0Plan& p, SrcLoc loc) {
  static_assert(std::is_integral<U>::value, "opkit emulator: compares write a bitmask: dst must be an integer LocalTensor");
  cmp_mode_check<T>(mode, call, loc);
  if (p.repeats == 0) return;
  const uint64_t bits = uint64_t(p.repeats) * kLanes<T>;
  ApiCall c(Pipe::V, call, loc);
  c.write(dst.m_, 0, bits, 1, "dst");
  l0_declare(c, a, p, ga, false, "src0");
  if (b) l0_declare(c, *b, p, gb, false, "src1");
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<T>(VecOp::Compare, p);
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.data());
  l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
    const T y = b ? b->data()[gb.at<T>(r, l)] : s;
    const uint64_t k = uint64_t(r) * kLanes<T> + l;
    const uint8_t bit = static_cast<uint8_t>(1u << (k & 7));
    d[k >> 3] = cmp_elem<T>(a.data()[ga.at<T>(r, l)], y, mode) ? (d[k >> 3] | bit) : (d[k >> 3] & ~bit);
    const bool bad = poisoned && (l0_poisoned(a, ga, r, l) || (b && l0_poisoned(*b, gb, r, l)));
    const uint32_t at = dst.m_.ub_off() + static_cast<uint32_t>(k >> 3);
    set_defined_bits(at, bad ? static_cast<uint8_t>(defined_bits(at) & ~bit) : static_cast<uint8_t>(defined_bits(at) | bit));
  });
}

// Count form of Compares: count x sizeof(T) a multiple of 256 bytes, as for Compare.
template <class T, class U>
void compare_scalar(const char* call, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0, T s,
                    AscendC::CMPMODE mode, uint32_t count, SrcLoc loc) {
  static_assert(std::is_integral<U>::value, "opkit emulator: compares write a bitmask: dst must be an integer LocalTensor");
  cmp_mode_check<T>(mode, call, loc);
  if (!vec_prologue<T>(VecOp::Compare, call, count, loc)) return;
  const uint64_t bytes = uint64_t(count) * sizeof(T);
  if (bytes % kRepeat != 0)
    fail("compare-length", call, loc,
         strf("count %u x %zu bytes = %llu bytes is not a multiple of 256 bytes", count, sizeof(T), (unsigned long long)bytes));
  // dst bit i is poison iff src0 lane i is, as for Compare (computing on poison is legal)
  ApiCall(Pipe::V, call, loc).write(dst.m_, 0, count, 1, "dst").src(src0, count, "src0").commit();
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.data());
  for (uint32_t byte = 0; byte < count / 8; ++byte) {
    uint8_t v = 0;
    for (uint32_t k = 0; k < 8; ++k) v |= static_cast<uint8_t>(cmp_elem<T>(src0.data()[byte * 8 + k], s, mode)) << k;
    d[byte] = v;
  }
}

// Level-0 Select: lane (r, l) takes src0 where its selMask bit is 1.
template <class T, class U>
void l0_select(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& sel, const AscendC::LocalTensor<T>& a,
               const AscendC::LocalTensor<T>* b, T s, AscendC::SELMODE mode, MaskArg m, int64_t repeat,
               const AscendC::BinaryRepeatParams& rp, bool setMask, SrcLoc loc) {
  static_assert(is_sel_t<T>, "opkit emulator: Select supports half and float on this chip");
  const char* call = "Select";
  const bool spr = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
  if (!b && mode != AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE)
    fail("dtype-unsupported", call, loc, "VSEL_TENSOR_TENSOR_MODE and VSEL_CMPMASK_SPR need a tensor src1");
  const L0Plan p = l0_plan<T>(setMask, m, repeat, call, loc);
  if (p.repeats == 0) return;
  const L0Geom gd{rp.dstBlkStride, rp.dstRepStride}, ga{rp.src0BlkStride, rp.src0RepStride},
      gb{rp.src1BlkStride, rp.src1RepStride};
  const uint64_t mask_bits_used = spr ? kLanes<T> : uint64_t(p.repeats) * kLanes<T>;
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, dst, p, gd, true, "dst");
  l0_declare(c, a, p, ga, false, "src0");
  if (b) l0_declare(c, *b, p, gb, false, "src1");
  c.read(sel.m_, 0, mask_bits_used, 1, "selMask");
  // A dst lane is poison iff its mask bit or the source lane it takes could be (as for the count form).
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    const Operand& mo = c.operand(c.size() - 1);
    l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
      const uint64_t k = spr ? l : uint64_t(r) * kLanes<T> + l;
      bad.push_back(ApiCall::lane_poisoned(mo, k) || l0_poisoned(a, ga, r, l) || (b && l0_poisoned(*b, gb, r, l)));
    });
  }
  l0_count<T>(VecOp::Select, p);
  const uint8_t* mk = reinterpret_cast<const uint8_t*>(sel.data());
  T* d = dst.data();
  T out[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {  // read the whole repeat before writing (in-place safe)
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = 0; l < kLanes<T>; ++l) {
      if (!lane_on(lo, hi, l)) continue;
      const uint64_t k = spr ? l : uint64_t(r) * kLanes<T> + l;
      out[l] = ((mk[k >> 3] >> (k & 7)) & 1) ? a.data()[ga.at<T>(r, l)] : (b ? b->data()[gb.at<T>(r, l)] : s);
    }
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l)) d[gd.at<T>(r, l)] = out[l];
  }
  l0_mark(dst, p, gd, bad.empty() ? nullptr : &bad);
}

}  // namespace opkit_emu

namespace AscendC {

template <class T, class U, bool isSetMask = true>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
              uint32_t count, OPKIT_LOC) {
  opkit_emu::compare_scalar<T, U>("Compares", dst, src0, src1Scalar, cmpMode, count, loc);
}
// The name of the same API in earlier CANN releases.
template <class T, class U, bool isSetMask = true>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                   uint32_t count, OPKIT_LOC) {
  opkit_emu::compare_scalar<T, U>("CompareScalar", dst, src0, src1Scalar, cmpMode, count, loc);
}

#define OPKIT_EMU_CMPS_L0(NAME, MASKT, MASKV)                                                                   \
  template <class T, class U, bool isSetMask = true>                                                           \
  void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode, MASKT mask, \
            uint8_t repeatTime, const UnaryRepeatParams& repeatParams, OPKIT_LOC) {                             \
    using namespace opkit_emu;                                                                                 \
    const L0Plan p = l0_plan<T>(isSetMask, MASKV, repeatTime, #NAME, loc);                                     \
    l0_compare<T, U>(#NAME, dst, src0, L0Geom{repeatParams.srcBlkStride, repeatParams.srcRepStride}, nullptr,   \
                     L0Geom{}, src1Scalar, cmpMode, p, loc);                                                   \
  }
OPKIT_EMU_CMPS_L0(Compares, const uint64_t, MaskArg(mask))
OPKIT_EMU_CMPS_L0(Compares, const uint64_t*, mask_bits(mask, kLanes<T>))
OPKIT_EMU_CMPS_L0(CompareScalar, const uint64_t, MaskArg(mask))
OPKIT_EMU_CMPS_L0(CompareScalar, const uint64_t*, mask_bits(mask, kLanes<T>))
#undef OPKIT_EMU_CMPS_L0

#define OPKIT_EMU_CMP_L0(MASKT, MASKV)                                                                          \
  template <class T, class U, bool isSetMask = true>                                                           \
  void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, \
               MASKT mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) {             \
    using namespace opkit_emu;                                                                                 \
    const L0Plan p = l0_plan<T>(isSetMask, MASKV, repeatTime, "Compare", loc);                                 \
    l0_compare<T, U>("Compare", dst, src0, L0Geom{repeatParams.src0BlkStride, repeatParams.src0RepStride}, &src1, \
                     L0Geom{repeatParams.src1BlkStride, repeatParams.src1RepStride}, T{}, cmpMode, p, loc);     \
  }
OPKIT_EMU_CMP_L0(const uint64_t, MaskArg(mask))
OPKIT_EMU_CMP_L0(const uint64_t*, mask_bits(mask, kLanes<T>))
#undef OPKIT_EMU_CMP_L0

#define OPKIT_EMU_SEL_L0(MASKT, MASKV)                                                                          \
  template <class T, class U, bool isSetMask = true>                                                           \
  void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,            \
              const LocalTensor<T>& src1, SELMODE selMode, MASKT mask, uint8_t repeatTime,                     \
              const BinaryRepeatParams& repeatParams, OPKIT_LOC) {                                              \
    using namespace opkit_emu;                                                                                 \
    l0_select<T, U>(dst, selMask, src0, &src1, T{}, selMode, MASKV, repeatTime, repeatParams, isSetMask, loc);  \
  }                                                                                                            \
  template <class T, class U, bool isSetMask = true>                                                           \
  void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,    \
              SELMODE selMode, MASKT mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) { \
    using namespace opkit_emu;                                                                                 \
    l0_select<T, U>(dst, selMask, src0, nullptr, src1, selMode, MASKV, repeatTime, repeatParams, isSetMask, loc); \
  }
OPKIT_EMU_SEL_L0(uint64_t, MaskArg(mask))
OPKIT_EMU_SEL_L0(const uint64_t*, mask_bits(mask, kLanes<T>))
#undef OPKIT_EMU_SEL_L0

}  // namespace AscendC

// The CmpMask register forms (asc-devkit 82b89a15 include/basic_api/kernel_operator_vec_cmpsel_intf.h:66-75,
// 96-99, 201-206; docs .../比较与选择/Compare（结果存入寄存器）.md, GetCmpMask(ISASI).md, SetCmpMask(ISASI).md):
//  - Compare(src0, src1, cmpMode, mask, repeatParams): one repeat (256 bytes, no repeatTime), lane l's result
//    into bit l of the 128-bit register; half and float only; masked-off lanes' bits are left as they were
//    (as the tensor form leaves dst bits);
//  - GetCmpMask(dst): the register's 16 bytes into dst (16-byte aligned); SetCmpMask(src): 16 bytes of src into it;
//  - Select<T, VSEL_CMPMASK_SPR>(dst, src0, src1, repeatTime, repeatParams): mode 0 with the register as selMask,
//    the first 256/sizeof(T) bits in every repeat, lanes from the vector mask in effect (no mask argument).
//    Mode 1's register form Select(dst, selMask, src0, repeatTime, repeatParams) takes its scalar from the
//    register (below); mode 2's takes a selMask address through SetCmpMask: not modelled, a compile error.
namespace opkit_emu {
inline bool cmp_reg_bit(const uint64_t* r, uint32_t l) { return (r[l >> 6] >> (l & 63)) & 1; }
inline void cmp_reg_set(uint64_t* r, uint32_t l, bool v) {
  r[l >> 6] = v ? (r[l >> 6] | (1ull << (l & 63))) : (r[l >> 6] & ~(1ull << (l & 63)));
}

template <class T>
void cmp_to_register(const AscendC::LocalTensor<T>& a, const AscendC::LocalTensor<T>& b, AscendC::CMPMODE mode,
                     MaskArg m, bool setMask, const AscendC::BinaryRepeatParams& rp, SrcLoc loc) {
  static_assert(is_sel_t<T>, "opkit emulator: Compare into the CmpMask register supports half and float");
  const L0Plan p = l0_plan<T>(setMask, m, 1, "Compare", loc);
  if (p.repeats == 0) return;
  const L0Geom ga{rp.src0BlkStride, rp.src0RepStride}, gb{rp.src1BlkStride, rp.src1RepStride};
  ApiCall c(Pipe::V, "Compare", loc);
  l0_declare(c, a, p, ga, false, "src0");
  l0_declare(c, b, p, gb, false, "src1");
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<T>(VecOp::Compare, p);
  BlockCtx& x = ctx();
  l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
    cmp_reg_set(x.cmp_mask, l, cmp_elem<T>(a.data()[ga.at<T>(r, l)], b.data()[gb.at<T>(r, l)], mode));
    cmp_reg_set(x.cmp_def, l, !(poisoned && (l0_poisoned(a, ga, r, l) || l0_poisoned(b, gb, r, l))));
  });
}
}  // namespace opkit_emu

namespace AscendC {
template <class T, bool isSetMask = true>
void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask,
             const BinaryRepeatParams& repeatParams, OPKIT_LOC) {
  opkit_emu::cmp_to_register<T>(src0, src1, cmpMode, opkit_emu::MaskArg(mask), isSetMask, repeatParams, loc);
}
template <class T, bool isSetMask = true>
void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask[],
             const BinaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  cmp_to_register<T>(src0, src1, cmpMode, mask_bits(mask, kLanes<T>), isSetMask, repeatParams, loc);
}

template <class T>
void GetCmpMask(const LocalTensor<T>& dst, OPKIT_LOC) {
  using namespace opkit_emu;
  if (dst.m_.ub_off() % 16 != 0)
    fail("api-argument", "GetCmpMask", loc, strf("dst starts at UB byte %u, not 16-byte aligned", dst.m_.ub_off()));
  BlockCtx& x = ctx();
  ApiCall c(Pipe::V, "GetCmpMask", loc);
  c.write(dst.m_, 0, 128, 1, "dst");
  c.commit(Flow::Manual);
  std::memcpy(dst.data(), x.cmp_mask, 16);
  for (uint32_t i = 0; i < 16; ++i)  // a byte's bits defined as the register's are
    set_defined_bits(dst.m_.ub_off() + i, static_cast<uint8_t>(x.cmp_def[i / 8] >> (8 * (i % 8))));
}
template <class T>
void SetCmpMask(const LocalTensor<T>& src, OPKIT_LOC) {
  using namespace opkit_emu;
  if (src.m_.ub_off() % 16 != 0)
    fail("api-argument", "SetCmpMask", loc, strf("src starts at UB byte %u, not 16-byte aligned", src.m_.ub_off()));
  BlockCtx& x = ctx();
  ApiCall c(Pipe::V, "SetCmpMask", loc);
  c.read(src.m_, 0, 128, 1, "src");
  const bool poisoned = c.commit(Flow::Manual);
  std::memcpy(x.cmp_mask, src.data(), 16);
  for (uint32_t l = 0; l < 128; ++l) cmp_reg_set(x.cmp_def, l, !(poisoned && ApiCall::lane_poisoned(c.operand(0), l)));
}

template <class T, SELMODE selMode>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_sel_t<T>, "opkit emulator: Select supports half and float on this chip");
  static_assert(selMode == SELMODE::VSEL_CMPMASK_SPR,
                "opkit emulator: Select<T, selMode>(dst, src0, src1, repeatTime, repeatParams) is modelled for "
                "VSEL_CMPMASK_SPR only (mode 1's register form is Select(dst, selMask, src0, repeatTime, "
                "repeatParams); mode 2's takes a selMask address through SetCmpMask: not modelled)");
  const L0Plan p = l0_plan<T>(false, MaskArg(uint64_t{0}), repeatTime, "Select", loc);  // the vector mask in effect
  if (p.repeats == 0) return;
  const L0Geom gd{repeatParams.dstBlkStride, repeatParams.dstRepStride},
      ga{repeatParams.src0BlkStride, repeatParams.src0RepStride}, gb{repeatParams.src1BlkStride, repeatParams.src1RepStride};
  BlockCtx& x = ctx();
  ApiCall c(Pipe::V, "Select", loc);
  l0_declare(c, dst, p, gd, true, "dst");
  l0_declare(c, src0, p, ga, false, "src0");
  l0_declare(c, src1, p, gb, false, "src1");
  const bool poisoned = c.commit(Flow::Manual);
  std::vector<uint8_t> bad;
  l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
    bad.push_back(!cmp_reg_bit(x.cmp_def, l) ||
                  (poisoned && (l0_poisoned(src0, ga, r, l) || l0_poisoned(src1, gb, r, l))));
  });
  l0_count<T>(VecOp::Select, p);
  T out[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {  // read the whole repeat before writing (in-place safe)
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l))
        out[l] = cmp_reg_bit(x.cmp_mask, l) ? src0.data()[ga.at<T>(r, l)] : src1.data()[gb.at<T>(r, l)];
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l)) dst.data()[gd.at<T>(r, l)] = out[l];
  }
  l0_mark(dst, p, gd, &bad);
}

// Select mode 1 without src1 or mask (asc-devkit 82b89a15 include/basic_api/kernel_operator_vec_cmpsel_intf.h:208-213,
// impl/basic_api/kernel_operator_vec_cmpsel_intf_impl.h:525-539, dav_c220/kernel_operator_vec_cmpsel_impl.h:144-154:
// vsel with VSEL_TENSOR_SCALAR_MODE; pages Select.md "Select模式1 / 不传入mask参数" and SetCmpMask(ISASI).md
// "模式1: SetCmpMask中传入src1 LocalTensor"): the scalar src1 is the first sizeof(T) bytes of the CmpMask
// register (SetCmpMask's tensor), selMask is consumed continuously (repeat r uses its bits r*256/sizeof(T)..),
// lanes come from the vector mask in effect. A lane that takes an undefined register value is poison.
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_sel_t<T>, "opkit emulator: Select supports half and float on this chip");
  const char* call = "Select";
  const L0Plan p = l0_plan<T>(false, MaskArg(uint64_t{0}), repeatTime, call, loc);  // the vector mask in effect
  if (p.repeats == 0) return;
  const L0Geom gd{repeatParams.dstBlkStride, repeatParams.dstRepStride},
      ga{repeatParams.src0BlkStride, repeatParams.src0RepStride};
  BlockCtx& x = ctx();
  T s;
  std::memcpy(&s, x.cmp_mask, sizeof(T));
  bool s_def = true;
  for (uint32_t l = 0; l < 8 * sizeof(T); ++l) s_def = s_def && cmp_reg_bit(x.cmp_def, l);
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, dst, p, gd, true, "dst");
  l0_declare(c, src0, p, ga, false, "src0");
  c.read(selMask.m_, 0, uint64_t(p.repeats) * kLanes<T>, 1, "selMask");
  const bool poisoned = c.commit(Flow::Manual);
  const uint8_t* mk = reinterpret_cast<const uint8_t*>(selMask.data());
  auto bit = [&](uint32_t r, uint32_t l) { const uint64_t k = uint64_t(r) * kLanes<T> + l; return (mk[k >> 3] >> (k & 7)) & 1; };
  std::vector<uint8_t> bad;
  const Operand& mo = c.operand(c.size() - 1);
  l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {
    const bool take0 = bit(r, l);
    bad.push_back((poisoned && (ApiCall::lane_poisoned(mo, uint64_t(r) * kLanes<T> + l) ||
                                (take0 && l0_poisoned(src0, ga, r, l)))) ||
                  (!take0 && !s_def));
  });
  l0_count<T>(VecOp::Select, p);
  T out[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {  // read the whole repeat before writing (in-place safe)
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l)) out[l] = bit(r, l) ? src0.data()[ga.at<T>(r, l)] : s;
    for (uint32_t l = 0; l < kLanes<T>; ++l)
      if (lane_on(lo, hi, l)) dst.data()[gd.at<T>(r, l)] = out[l];
  }
  l0_mark(dst, p, gd, &bad);
}

// dst = src0 OP src1 for < > <= >= == != (asc-devkit 82b89a15 impl/basic_api/kernel_tensor_impl.h:1154-1230,
// kernel_operator_symbol_override_impl.h:218-243): the count-form Compare over src0.GetSize() elements into dst's
// bitmask (ops-math math/angle_v2 writes `mask1 = imagLocal >= zeroTensor`).
template <class T>
struct CompareExpr {
  LocalTensor<T> a, b;
  CMPMODE mode;
  opkit_emu::SrcLoc loc;
  template <class U>
  void opkit_emu_eval(const LocalTensor<U>& dst) const { Compare(dst, a, b, mode, a.GetSize(), loc); }
};
#define OPKIT_EMU_CMP_OP(OP, MODE)                                                                    \
  template <class T>                                                                                  \
  CompareExpr<T> operator OP(const LocalTensor<T>& a, opkit_emu::nondeduced_t<TensorArg<T>> b) {      \
    return {a, b.t, CMPMODE::MODE, b.loc};                                                            \
  }
OPKIT_EMU_CMP_OP(<, LT)
OPKIT_EMU_CMP_OP(>, GT)
OPKIT_EMU_CMP_OP(<=, LE)
OPKIT_EMU_CMP_OP(>=, GE)
OPKIT_EMU_CMP_OP(==, EQ)
OPKIT_EMU_CMP_OP(!=, NE)
#undef OPKIT_EMU_CMP_OP

// Duplicate(dst, src, count): src[0] copied count times (Duplicate.md).
template <class T>
void Duplicate(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_dup_t<T>, "opkit emulator: Duplicate does not support this element type on this chip");
  if (count > 0) src_check(src, 1, "Duplicate", loc, "src");
  Duplicate(dst, src.data()[0], count, loc);
}

}  // namespace AscendC
