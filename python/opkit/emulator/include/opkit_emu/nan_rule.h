// The NaN the emulator's floating arithmetic returns (docs/emulator.md "NaN rule"). asc-devkit documents no NaN
// payload or sign for vector arithmetic, and the host's own choice is not stable: when two NaNs meet in a
// commutative + or *, GCC may emit either operand order (x86 returns the first operand's NaN), and an Arm host's
// invalid-operation NaN is 0x7FC00000, not x86's 0xFFC00000. So the element loops pick it themselves, after the
// operation and only where its result is NaN (a compare and a blend: the loops still vectorise):
//   a NaN: a, quieted;  else b NaN: b, quieted;  else (inf - inf, 0 * inf, 0 / 0, ...): kDefaultNan.
// That is x86's IEEE propagation with the operands in source order, so what the baseline build gave keeps its bits
// wherever GCC kept that order. Max / Min are selects, not arithmetic (vector.h OpMax): their NaN is an input's.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "opkit_emu/types.h"

namespace opkit_emu {

inline constexpr uint32_t kDefaultNanBits = 0xFFC00000u;  // x86's "real indefinite": every bundled op's bits hold it

// A NaN with its quiet bit set, sign and payload kept (what an x86 arithmetic instruction returns for it).
OPKIT_EMU_INLINE float quiet_nan_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u |= 0x00400000u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}
OPKIT_EMU_INLINE float default_nan() {
  float x;
  std::memcpy(&x, &kDefaultNanBits, sizeof x);
  return x;
}
// r = a (op) b, and r is NaN: the rule's NaN.
OPKIT_EMU_INLINE float nan_of(float a, float b) {
  return a != a ? quiet_nan_bits(a) : b != b ? quiet_nan_bits(b) : default_nan();
}
#if defined(__x86_64__) || defined(__i386__)
inline constexpr bool kNanRuleByHardware = true;
// x86 itself gives the rule for one NaN operand (that one, quieted) and for an invalid operation (0xFFC00000), and
// for two NaNs it returns the first source's (Intel SDM vol. 1 table 4-7, SSE / AVX / EVEX alike). Only a
// commutative + or * lets the compiler swap the operands, so only those force src0's NaN: one compare and a blend
// per lane instead of the whole selection (the whole selection made the baseline's SSE2 loops 3x slower than this
// form, 4.7x slower than main: bench_nan_rule.py). - and / are not commutative: the hardware's own result is the
// rule. This holds while the operation is executed: GCC folds some operations with a literal operand before any
// instruction runs (-1 * x -> -x and -0 - x -> -x flip a NaN's sign; 1 * x, -0 + x leave a signalling NaN
// unquieted), so a caller must not pass a compile-time constant as src0 (a literal scalar goes in src1, as Muls /
// Axpy do: the blend then covers src0), and the scalar loops' plain form hides its scalar (vector.h opaque_scalar).
OPKIT_EMU_INLINE float nan_rule(float r, float a, float) { return a != a ? quiet_nan_bits(a) : r; }
#else
inline constexpr bool kNanRuleByHardware = false;
OPKIT_EMU_INLINE float nan_rule(float r, float a, float b) { return r != r ? nan_of(a, b) : r; }
#endif

// The four arithmetic operations under the rule (float); other types (the integer paths' int64_t) as written.
template <class F> OPKIT_EMU_INLINE F fadd(F a, F b) {
  if constexpr (std::is_same<F, float>::value) return nan_rule(a + b, a, b);
  else return a + b;
}
template <class F> OPKIT_EMU_INLINE F fsub(F a, F b) {
  if constexpr (std::is_same<F, float>::value && !kNanRuleByHardware) return nan_rule(a - b, a, b);
  else return a - b;
}
template <class F> OPKIT_EMU_INLINE F fmul(F a, F b) {
  if constexpr (std::is_same<F, float>::value) return nan_rule(a * b, a, b);
  else return a * b;
}
template <class F> OPKIT_EMU_INLINE F fdiv(F a, F b) {
  if constexpr (std::is_same<F, float>::value && !kNanRuleByHardware) return nan_rule(a / b, a, b);
  else return a / b;
}

// The same for GCC vector-extension float vectors (reduce.h's 4-lane tree).
template <class V, class I>
OPKIT_EMU_INLINE V vnan_rule(V r, V a, V b) {
  constexpr int kQuiet = 0x00400000, kDefault = static_cast<int>(kDefaultNanBits);
  const I qa = __builtin_bit_cast(I, a) | kQuiet, qb = __builtin_bit_cast(I, b) | kQuiet;
#if defined(__x86_64__) || defined(__i386__)
  (void)qb, (void)kDefault;
  return __builtin_bit_cast(V, a != a ? qa : __builtin_bit_cast(I, r));  // as nan_rule above
#else
  const I pick = a != a ? qa : b != b ? qb : I{} + kDefault;
  return __builtin_bit_cast(V, r != r ? pick : __builtin_bit_cast(I, r));
#endif
}

}  // namespace opkit_emu
