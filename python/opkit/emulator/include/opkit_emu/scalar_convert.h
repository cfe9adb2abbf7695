// Scalar type helpers CANN's kernel headers declare in namespace AscendC and kernels call by name:
//  - BoolInst / TrueType / FalseType / IsSameType / SupportType / SupportBytes (mirror-cann/asc-devkit 82b89a15,
//    impl/basic_api/utils/kernel_utils_ceil_oom_que.h:293-326): `if constexpr (AscendC::IsSameType<T, half>::value)`.
//  - ToFloat(bfloat16_t) and ToBfloat16(float) (same commit, impl/basic_api/kernel_scalar_convert.h:27-82 and
//    :140-160, the __NPU_ARCH__ 2201 branch; also scalar Cast, which they call): ToFloat is the exact widening (the 16 bits moved up); ToBfloat16 rounds to
//    nearest, ties to even (IsBf16NeedRound in kernel_type_conversion_utils.h), an infinity keeps its sign,
//    and every NaN becomes 0x7FFF -- not the sign- and payload-keeping NaN of a bfloat16_t(float) conversion.
#pragma once
#include "opkit_emu/config.h"
#include "opkit_emu/types.h"

namespace AscendC {
template <bool b>
struct BoolInst {
  using Type = BoolInst<b>;
  static constexpr bool value = b;
};
using TrueType = BoolInst<true>;
using FalseType = BoolInst<false>;
template <typename T, typename U>
struct IsSameType : public FalseType {};
template <typename T>
struct IsSameType<T, T> : public TrueType {};
// Conditional<c, T1, T2>::type (std::conditional) and ConditionalMulti (asc-devkit 82b89a15
// impl/basic_api/utils/kernel_utils_constants.h:535-551): CANN's reduce_repeat example picks its element type with it.
template <bool condition, class T1, class T2>
struct Conditional {
  using type = T1;
};
template <class T1, class T2>
struct Conditional<false, T1, T2> {
  using type = T2;
};
template <bool condition1, bool condition2, class T1, class T2, class T3, class T4>
struct ConditionalMulti {
  using type = typename Conditional<condition1, typename Conditional<condition2, T1, T2>::type,
                                    typename Conditional<condition2, T3, T4>::type>::type;
};

// T is one of U, Args... (CANN uses it in static_asserts of supported dtypes).
template <typename T, typename U, typename... Args>
__aicore__ constexpr bool SupportType() {
  if constexpr (sizeof...(Args) > 0) return IsSameType<T, U>::value || SupportType<T, Args...>();
  return IsSameType<T, U>::value;
}
// sizeof(T) is one of U, Args...
template <typename T, int U, int... Args>
__aicore__ constexpr bool SupportBytes() {
  if constexpr (sizeof...(Args) > 0) return sizeof(T) == U || SupportBytes<T, Args...>();
  return sizeof(T) == U;
}

__aicore__ inline float ToFloat(const bfloat16_t& v) { return opkit_emu::bf16_bits_to_float(v.bits_); }

__aicore__ inline bfloat16_t ToBfloat16(const float& f) {
  const uint32_t u = opkit_emu::f32_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0)
    return bfloat16_t::FromBits(0x7fffu);  // CANN: bf16AbsMax for every NaN
  return bfloat16_t::FromBits(opkit_emu::float_to_bf16_bits(f));  // RNE; inf stays inf
}
}  // namespace AscendC
