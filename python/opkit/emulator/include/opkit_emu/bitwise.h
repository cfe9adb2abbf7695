// And / Or / Not (int16_t, uint16_t) and ShiftLeft / ShiftRight (int16/uint16/int32/uint32), count and
// level-0 forms. Doc: asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/逻辑计算/{And,Or,Not,ShiftLeft,
// ShiftRight}.md (mirror-cann/asc-devkit 7359511d): signed ShiftRight is arithmetic, unsigned logical;
// on A2 the shift is in [0, 16] for 16-bit and [0, 32] for 32-bit types; roundEn (signed only) adds the
// last bit shifted out.
#pragma once
#include "opkit_emu/level0.h"
#include "opkit_emu/unsupported.h"

namespace opkit_emu {
template <class T> inline constexpr bool is_logic_t = std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value;
template <class T> inline constexpr bool is_shift_t =
    is_logic_t<T> || std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value;

struct OpAnd { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return a & b; } };
struct OpOr { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return a | b; } };
struct OpNot { template <class F> static OPKIT_EMU_INLINE F ap(F a) { return static_cast<F>(~a); } };
// a arrives widened to int64 (sign- or zero-extended as T is), so >> is arithmetic exactly for signed T.
struct OpShl { static OPKIT_EMU_INLINE int64_t ap(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) << b); } };
struct OpShr { static OPKIT_EMU_INLINE int64_t ap(int64_t a, int64_t b) { return a >> b; } };
struct OpShrRound {
  static OPKIT_EMU_INLINE int64_t ap(int64_t a, int64_t b) { return b == 0 ? a : (a >> b) + ((a >> (b - 1)) & 1); }
};

template <class T, class S>
inline void check_shift(S s, const char* call, SrcLoc loc) {
  const int64_t v = static_cast<int64_t>(s), w = 8 * sizeof(T);
  if (v < 0 || v > w)
    fail("api-argument", call, loc, strf("shift %lld is outside [0, %lld] for %s", (long long)v, (long long)w, type_name<T>()));
}
}  // namespace opkit_emu

namespace AscendC {

#define OPKIT_EMU_LOGIC2(NAME, OP)                                                                             \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
            const int32_t& count, OPKIT_LOC) {                                                                \
    using namespace opkit_emu;                                                                                \
    static_assert(is_logic_t<T>, "opkit emulator: " #NAME " supports int16_t and uint16_t on this chip");     \
    binary<OP, T>(VecOp::Other, #NAME, dst, src0, src1, count, loc);                                          \
  }                                                                                                           \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,  \
            const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) {                    \
    using namespace opkit_emu;                                                                                \
    static_assert(is_logic_t<T>, "opkit emulator: " #NAME " supports int16_t and uint16_t on this chip");     \
    l0_binary<OP, T>(VecOp::Other, #NAME, isSetMask, dst, src0, src1, MaskArg(mask), repeatTime, repeatParams, loc); \
  }                                                                                                           \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
            const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, OPKIT_LOC) { \
    using namespace opkit_emu;                                                                                \
    static_assert(is_logic_t<T>, "opkit emulator: " #NAME " supports int16_t and uint16_t on this chip");     \
    l0_binary<OP, T>(VecOp::Other, #NAME, isSetMask, dst, src0, src1, mask_bits(mask, kLanes<T>), repeatTime, \
                     repeatParams, loc);                                                                      \
  }
OPKIT_EMU_LOGIC2(And, OpAnd)
OPKIT_EMU_LOGIC2(Or, OpOr)
#undef OPKIT_EMU_LOGIC2

template <class T, bool isSetMask = true>
void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_logic_t<T>, "opkit emulator: Not supports int16_t and uint16_t on this chip");
  unary<OpNot, T>(VecOp::Other, "Not", dst, src, count, loc);
}
template <class T, bool isSetMask = true>
void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTime,
         const UnaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_logic_t<T>, "opkit emulator: Not supports int16_t and uint16_t on this chip");
  l0_unary<OpNot, T>(VecOp::Other, "Not", isSetMask, dst, src, MaskArg(mask), repeatTime, repeatParams, loc);
}
template <class T, bool isSetMask = true>
void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime,
         const UnaryRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_logic_t<T>, "opkit emulator: Not supports int16_t and uint16_t on this chip");
  l0_unary<OpNot, T>(VecOp::Other, "Not", isSetMask, dst, src, mask_bits(mask, kLanes<T>), repeatTime, repeatParams,
                     loc);
}

// Shifts, CANN's forms (asc-devkit 82b89a15 include/basic_api/kernel_operator_vec_binary_scalar_intf.h:396-520):
// the scalar is `const T&`, or `const U&` with U the tensor's element type (enable_if is_same<PrimT<T>, U>) --
// a scalar of another type does not compile there, so not here either.
#define OPKIT_EMU_SHIFT_FORMS(NAME, OP, TPL, SCALAR, ROUND_P, ROUND_USE)                                         \
  TPL                                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SCALAR& scalarValue, const int32_t& count, \
            OPKIT_LOC) {                                                                                         \
    using namespace opkit_emu;                                                                                   \
    static_assert(is_shift_t<T>, "opkit emulator: " #NAME " supports int16/uint16/int32/uint32 on this chip");   \
    check_shift<T>(scalarValue, #NAME, loc);                                                                     \
    with_scalar<OP, T>(VecOp::Other, #NAME, dst, src, static_cast<T>(scalarValue), count, loc);                  \
  }                                                                                                              \
  TPL                                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SCALAR& scalarValue, uint64_t mask,      \
            const uint8_t repeatTime, const UnaryRepeatParams& repeatParams ROUND_P, OPKIT_LOC) {                \
    using namespace opkit_emu;                                                                                   \
    static_assert(is_shift_t<T>, "opkit emulator: " #NAME " supports int16/uint16/int32/uint32 on this chip");   \
    check_shift<T>(scalarValue, #NAME, loc);                                                                     \
    ROUND_USE(l0_scalar, MaskArg(mask));                                                                         \
  }                                                                                                              \
  TPL                                                                                                            \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SCALAR& scalarValue, const uint64_t mask[], \
            const uint8_t repeatTime, const UnaryRepeatParams& repeatParams ROUND_P, OPKIT_LOC) {                \
    using namespace opkit_emu;                                                                                   \
    static_assert(is_shift_t<T>, "opkit emulator: " #NAME " supports int16/uint16/int32/uint32 on this chip");   \
    check_shift<T>(scalarValue, #NAME, loc);                                                                     \
    ROUND_USE(l0_scalar, mask_bits(mask, kLanes<T>));                                                            \
  }
#define OPKIT_EMU_TPL_T template <class T, bool isSetMask = true>
#define OPKIT_EMU_TPL_TU \
  template <class T, class U, bool isSetMask = true, std::enable_if_t<std::is_same<T, U>::value, bool> = true>
// The shift count from a tensor (include/basic_api/kernel_operator_vec_binary_intf.h:450-467): its page,
// 逻辑计算/ShiftLeft（左移位数为Tensor）.md and ShiftRight（右移位数为Tensor）.md, says "Atlas A2 ...: 不支持".
#define OPKIT_EMU_SHIFT_TENSOR(NAME)                                                                             \
  template <class T, class U>                                                                                    \
  void NAME(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<U>&, const int32_t&) {               \
    static_assert(::opkit_emu::always_false<T, U>, OPKIT_EMU_REJECT_MSG(NAME, "a LocalTensor of shift counts: "   \
                  "not on Atlas A2 (its API page)"));                                                            \
  }
#define OPKIT_EMU_SHL_USE(F, M) \
  F<OpShl, T>(VecOp::Other, "ShiftLeft", isSetMask, dst, src, static_cast<T>(scalarValue), M, repeatTime, repeatParams, loc)
#define OPKIT_EMU_SHR_USE(F, M)                                                                                 \
  if (roundEn && std::is_signed<T>::value)                                                                      \
    F<OpShrRound, T>(VecOp::Other, "ShiftRight", isSetMask, dst, src, static_cast<T>(scalarValue), M, repeatTime, \
                     repeatParams, loc);                                                                        \
  else                                                                                                          \
    F<OpShr, T>(VecOp::Other, "ShiftRight", isSetMask, dst, src, static_cast<T>(scalarValue), M, repeatTime,     \
                repeatParams, loc)
#define OPKIT_EMU_COMMA2 ,
OPKIT_EMU_SHIFT_FORMS(ShiftLeft, OpShl, OPKIT_EMU_TPL_T, T, , OPKIT_EMU_SHL_USE)
OPKIT_EMU_SHIFT_FORMS(ShiftLeft, OpShl, OPKIT_EMU_TPL_TU, U, , OPKIT_EMU_SHL_USE)
OPKIT_EMU_SHIFT_FORMS(ShiftRight, OpShr, OPKIT_EMU_TPL_T, T, OPKIT_EMU_COMMA2 bool roundEn = false, OPKIT_EMU_SHR_USE)
OPKIT_EMU_SHIFT_FORMS(ShiftRight, OpShr, OPKIT_EMU_TPL_TU, U, OPKIT_EMU_COMMA2 bool roundEn, OPKIT_EMU_SHR_USE)
OPKIT_EMU_SHIFT_TENSOR(ShiftLeft)
OPKIT_EMU_SHIFT_TENSOR(ShiftRight)
#undef OPKIT_EMU_SHIFT_FORMS
#undef OPKIT_EMU_SHIFT_TENSOR
#undef OPKIT_EMU_TPL_T
#undef OPKIT_EMU_TPL_TU
#undef OPKIT_EMU_SHL_USE
#undef OPKIT_EMU_SHR_USE

}  // namespace AscendC
