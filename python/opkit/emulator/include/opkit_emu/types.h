// half (IEEE binary16) and bfloat16_t: storage types with round-to-nearest-even conversion from float.
// Facts sheet §7: CANN's own half/bf16 come from closed libraries, so the emulator supplies them.
// Scalar conversion follows IEEE (overflow -> inf), like numpy/torch; the vector Cast API adds the
// RoundMode and saturation semantics on top (cast.h).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#define OPKIT_EMU_INLINE __attribute__((always_inline)) inline
// The conversions are constexpr: kernels write `constexpr half kOne = 1.0;` (bisheng's half is a builtin type).
// GCC's __builtin_bit_cast (GCC >= 11) is the constexpr form of the memcpy.
#define OPKIT_EMU_CINLINE __attribute__((always_inline)) constexpr inline

namespace opkit_emu {

OPKIT_EMU_CINLINE uint32_t f32_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
OPKIT_EMU_CINLINE float bits_f32(uint32_t u) { return __builtin_bit_cast(float, u); }

// binary16 -> float, exact. Normal numbers are a re-bias of the exponent; subnormals are
// renormalised by one float subtraction; inf/NaN keep sign and payload. Written with selects
// instead of branches so the conversion loops vectorise.
OPKIT_EMU_CINLINE float half_bits_to_float(uint16_t h) {
  const uint32_t mag = static_cast<uint32_t>(h & 0x7fffu) << 13;  // exponent+mantissa in float position
  const uint32_t exp = mag & 0x0f800000u;
  const uint32_t normal = mag + 0x38000000u;                       // re-bias 15 -> 127
  const uint32_t infnan = mag + 0x70000000u;                       // exponent all ones
  const uint32_t sub = f32_bits(bits_f32(mag + 0x38800000u) - bits_f32(0x38800000u));  // mantissa * 2^-24
  const uint32_t out = exp == 0x0f800000u ? infnan : (exp == 0 ? sub : normal);
  return bits_f32(out | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

// float -> binary16, round to nearest even, overflow to inf, NaN stays NaN (payload top bits kept).
OPKIT_EMU_CINLINE uint16_t float_to_half_bits(float x) {
  const uint32_t f = f32_bits(x);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t a = f & 0x7fffffffu;
  // normal range: re-bias 127 -> 15 and round half to even on the 13 dropped bits
  const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  // below 2^-14: adding 0.5 puts the value's 2^-24 units in the low mantissa bits, rounded by the FPU
  const uint32_t sub = f32_bits(bits_f32(a < 0x38800000u ? a : 0u) + 0.5f) - 0x3f000000u;
  uint32_t nan = 0x7c00u | ((a >> 13) & 0x3ffu);
  nan |= (nan == 0x7c00u) ? 1u : 0u;
  const uint32_t r = a > 0x7f800000u ? nan
                   : a >= 0x477ff000u ? 0x7c00u        // >= 65520 rounds to inf (and inf itself)
                   : a < 0x38800000u  ? sub
                                      : normal;
  return static_cast<uint16_t>(sign | r);
}

OPKIT_EMU_CINLINE float bf16_bits_to_float(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

// float -> bfloat16, round to nearest even; NaN stays a (quiet) NaN.
OPKIT_EMU_CINLINE uint16_t float_to_bf16_bits(float x) {
  const uint32_t f = f32_bits(x);
  const uint32_t rounded = (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((f & 0x7fffffffu) > 0x7f800000u ? ((f >> 16) | 0x0040u) : rounded);
}

struct RawBits {};  // tag: construct from a bit pattern

}  // namespace opkit_emu

// Global, as in CANN (kernels write `half`, `bfloat16_t` unqualified).
struct half {
  uint16_t bits_;
  half() = default;
  constexpr half(uint16_t b, opkit_emu::RawBits) : bits_(b) {}
  template <class A, class = std::enable_if_t<std::is_arithmetic<A>::value>>
  OPKIT_EMU_CINLINE half(A v) : bits_(opkit_emu::float_to_half_bits(static_cast<float>(v))) {}
  OPKIT_EMU_CINLINE operator float() const { return opkit_emu::half_bits_to_float(bits_); }
  OPKIT_EMU_INLINE float ToFloat() const { return static_cast<float>(*this); }
  static half FromBits(uint16_t b) { return half(b, opkit_emu::RawBits{}); }
  template <class A> half& operator+=(A v) { return *this = half(float(*this) + float(v)); }
  template <class A> half& operator-=(A v) { return *this = half(float(*this) - float(v)); }
  template <class A> half& operator*=(A v) { return *this = half(float(*this) * float(v)); }
  template <class A> half& operator/=(A v) { return *this = half(float(*this) / float(v)); }
  half operator-() const { return FromBits(static_cast<uint16_t>(bits_ ^ 0x8000u)); }
};

struct bfloat16_t {
  uint16_t bits_;
  bfloat16_t() = default;
  constexpr bfloat16_t(uint16_t b, opkit_emu::RawBits) : bits_(b) {}
  template <class A, class = std::enable_if_t<std::is_arithmetic<A>::value>>
  OPKIT_EMU_CINLINE bfloat16_t(A v) : bits_(opkit_emu::float_to_bf16_bits(static_cast<float>(v))) {}
  OPKIT_EMU_CINLINE operator float() const { return opkit_emu::bf16_bits_to_float(bits_); }
  OPKIT_EMU_INLINE float ToFloat() const { return static_cast<float>(*this); }
  static bfloat16_t FromBits(uint16_t b) { return bfloat16_t(b, opkit_emu::RawBits{}); }
  template <class A> bfloat16_t& operator+=(A v) { return *this = bfloat16_t(float(*this) + float(v)); }
  template <class A> bfloat16_t& operator-=(A v) { return *this = bfloat16_t(float(*this) - float(v)); }
  template <class A> bfloat16_t& operator*=(A v) { return *this = bfloat16_t(float(*this) * float(v)); }
  template <class A> bfloat16_t& operator/=(A v) { return *this = bfloat16_t(float(*this) / float(v)); }
  bfloat16_t operator-() const { return FromBits(static_cast<uint16_t>(bits_ ^ 0x8000u)); }
};

// int4b_t (CANN asc-devkit 82b89a15 impl/utils/common_types.h:57-108: integer_sub_type<4, true>, global): a signed
// 4-bit integer whose value is the low nibble of one uint8_t (`storage`, masked on construction, :69-71), read back
// sign-extended to int8_t (:73-80); sizeof 1. In a tensor two share a byte, element 2k in the low nibble and 2k+1 in
// the high one (impl/basic_api/kernel_tensor_impl.h:195-196, 325-328): tensor.h.
struct int4b_t {
  uint8_t storage = 0;
  int4b_t() = default;
  template <class A, class = std::enable_if_t<std::is_integral<A>::value>>
  constexpr int4b_t(A v) : storage(static_cast<uint8_t>(static_cast<uint32_t>(v) & 0xfu)) {}
  constexpr operator int8_t() const { return static_cast<int8_t>((storage & 0x8u) ? (storage | 0xf0u) : storage); }
  constexpr bool operator==(const int4b_t& o) const { return storage == o.storage; }
  constexpr bool operator!=(const int4b_t& o) const { return storage != o.storage; }
  constexpr bool operator<(const int4b_t& o) const { return int8_t(*this) < int8_t(o); }
  constexpr bool operator>(const int4b_t& o) const { return int8_t(*this) > int8_t(o); }
  constexpr bool operator<=(const int4b_t& o) const { return int8_t(*this) <= int8_t(o); }
  constexpr bool operator>=(const int4b_t& o) const { return int8_t(*this) >= int8_t(o); }
};
namespace AscendC { using ::int4b_t; }

static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "half/bfloat16_t must be 2 bytes");
static_assert(std::is_trivially_copyable<half>::value && std::is_trivially_copyable<bfloat16_t>::value, "POD");

namespace opkit_emu {
template <class T> struct is_fp16_like : std::integral_constant<bool, std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value> {};
template <class T> inline constexpr bool is_bf16_v = std::is_same<T, bfloat16_t>::value;
template <class T> inline constexpr bool is_half_v = std::is_same<T, half>::value;
template <class T> inline constexpr bool is_float_like_v = std::is_same<T, float>::value || is_fp16_like<T>::value;

// Element <-> float for the compute loops (exact for every supported type).
template <class T> OPKIT_EMU_INLINE float to_f(T v) { return static_cast<float>(v); }
template <> OPKIT_EMU_INLINE float to_f<half>(half v) { return half_bits_to_float(v.bits_); }
template <> OPKIT_EMU_INLINE float to_f<bfloat16_t>(bfloat16_t v) { return bf16_bits_to_float(v.bits_); }
template <class T> OPKIT_EMU_INLINE T from_f(float v) { return static_cast<T>(v); }
template <> OPKIT_EMU_INLINE half from_f<half>(float v) { return half::FromBits(float_to_half_bits(v)); }
template <> OPKIT_EMU_INLINE bfloat16_t from_f<bfloat16_t>(float v) { return bfloat16_t::FromBits(float_to_bf16_bits(v)); }

template <class T> constexpr const char* type_name() {
  if constexpr (std::is_same<T, half>::value) return "half";
  else if constexpr (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
  else if constexpr (std::is_same<T, float>::value) return "float";
  else if constexpr (std::is_same<T, double>::value) return "double";
  else if constexpr (std::is_same<T, int8_t>::value) return "int8_t";
  else if constexpr (std::is_same<T, uint8_t>::value) return "uint8_t";
  else if constexpr (std::is_same<T, int16_t>::value) return "int16_t";
  else if constexpr (std::is_same<T, uint16_t>::value) return "uint16_t";
  else if constexpr (std::is_same<T, int32_t>::value) return "int32_t";
  else if constexpr (std::is_same<T, uint32_t>::value) return "uint32_t";
  else if constexpr (std::is_same<T, int64_t>::value) return "int64_t";
  else if constexpr (std::is_same<T, uint64_t>::value) return "uint64_t";
  else if constexpr (std::is_same<T, int4b_t>::value) return "int4b_t";
  else return "?";
}
}  // namespace opkit_emu

// bisheng's name of the bfloat16 type, which kernels also spell `__bf16` (`std::is_same_v<T, __bf16>`); g++ 12 has
// no such type on x86 (GCC 13 adds one, distinct from ours), so the name is this one.
#ifndef OPKIT_EMU_NO_BF16_ALIAS
#define __bf16 bfloat16_t
#endif

