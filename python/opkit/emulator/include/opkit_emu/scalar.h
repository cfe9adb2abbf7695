// Scalar-unit helpers: bit counting (GetBitCount / ScalarGetCountOfValue, CountLeadingZero /
// ScalarCountLeadingZero, CountBitsCntSameAsSignBit, GetSFFValue / ScalarGetSFFValue), scalar Cast
// (float -> half / int32_t with a RoundMode, float <-> bfloat16_t), GM access bypassing the data cache, and
// NumericLimits<T>. Doc: asc-devkit docs/zh/api/SIMD-API/基础API/标量计算/*.md and
// include/basic_api/kernel_operator_limits_intf.h (mirror-cann/asc-devkit 82b89a15):
//  - CountLeadingZero(0) is 64; CountBitsCntSameAsSignBit counts the bits after the sign bit equal to it,
//    -1 for 0 and -1; GetSFFValue<v> is the position of the lowest bit equal to v, -1 if none;
//  - scalar Cast float -> bfloat16_t rounds to nearest even (the page names no mode; IEEE default);
//  - NumericLimits: IEEE limits of the type; the tensor forms fill `count` elements with the value.
#pragma once
#include <cstring>
#include <limits>

#include "opkit_emu/cast.h"
#include "opkit_emu/scalar_convert.h"

namespace AscendC {
template <int countValue>
inline int64_t GetBitCount(uint64_t valueIn) {
  static_assert(countValue == 0 || countValue == 1, "GetBitCount: countValue is 0 or 1");
  const int64_t ones = __builtin_popcountll(valueIn);
  return countValue == 1 ? ones : 64 - ones;
}
template <int countValue>
inline int64_t ScalarGetCountOfValue(uint64_t valueIn) { return GetBitCount<countValue>(valueIn); }
inline int64_t CountLeadingZero(uint64_t valueIn) { return valueIn == 0 ? 64 : __builtin_clzll(valueIn); }
inline int64_t ScalarCountLeadingZero(uint64_t valueIn) { return CountLeadingZero(valueIn); }
inline int64_t CountBitsCntSameAsSignBit(int64_t valueIn) {
  if (valueIn == 0 || valueIn == -1) return -1;
  return __builtin_clrsbll(valueIn);
}
template <int countValue>
inline int64_t GetSFFValue(uint64_t valueIn) {
  static_assert(countValue == 0 || countValue == 1, "GetSFFValue: countValue is 0 or 1");
  const uint64_t v = countValue == 1 ? valueIn : ~valueIn;
  return v == 0 ? -1 : __builtin_ctzll(v);
}
template <int countValue>
inline int64_t ScalarGetSFFValue(uint64_t valueIn) { return GetSFFValue<countValue>(valueIn); }

template <class T, class U, RoundMode roundMode>
inline U Cast(T valueIn) {
  static_assert(std::is_same<T, float>::value && (std::is_same<U, half>::value || std::is_same<U, int32_t>::value),
                "opkit emulator: scalar Cast converts float to half or int32_t (标量计算/Cast（float转half-int32_t）.md)");
  U out{};
  opkit_emu::cast_generic_loop<U, T>(&out, &valueIn, 1, roundMode);
  return out;
}
template <class T, class U, RoundMode roundMode>
inline U ScalarCast(T valueIn) { return Cast<T, U, roundMode>(valueIn); }
// CANN's scalar float <-> bfloat16_t (kernel_scalar_convert.h: Cast is what ToBfloat16 / ToFloat call).
inline bfloat16_t Cast(const float& fVal) { return ToBfloat16(fVal); }
inline float Cast(const bfloat16_t& bVal) { return ToFloat(bVal); }

// One element of GM, read or written by the scalar unit without the data cache: bounds-checked like any
// GM access.
template <class T>
inline T ReadGmByPassDCache(__gm__ T* addr, OPKIT_LOC) {
  opkit_emu::gm_check(addr, sizeof(T), "ReadGmByPassDCache", loc, "addr");
  // garbage (padding, or run-asc memory nothing wrote) read by the scalar unit fails, as GetValue's does (gm_pad.h)
  opkit_emu::gm_pad_scalar(addr, sizeof(T), -1, false, "ReadGmByPassDCache", loc);
  opkit_emu::ctx().stats.gm_read_bytes += sizeof(T);
  return *addr;
}
template <class T>
inline void WriteGmByPassDCache(__gm__ T* addr, T value, OPKIT_LOC) {
  opkit_emu::gm_check(addr, sizeof(T), "WriteGmByPassDCache", loc, "addr");
  opkit_emu::gm_pad_scalar(addr, sizeof(T), -1, true, "WriteGmByPassDCache", loc);  // defines what it writes
  opkit_emu::ctx().stats.gm_write_bytes += sizeof(T);
  opkit_emu::gm_mark_write(addr);
  *addr = value;
}

template <class T>
struct NumericLimits {
  static_assert(std::is_same<T, uint8_t>::value || std::is_same<T, int8_t>::value || std::is_same<T, uint16_t>::value ||
                    std::is_same<T, int16_t>::value || std::is_same<T, uint32_t>::value ||
                    std::is_same<T, int32_t>::value || std::is_same<T, half>::value || std::is_same<T, float>::value,
                "NumericLimits: current data type is not supported on this chip");
  static T Max() { return is_h ? bits(0x7BFF) : std::numeric_limits<T>::max(); }
  static T Lowest() { return is_h ? bits(0xFBFF) : std::numeric_limits<T>::lowest(); }
  static T Min() { return is_h ? bits(0x0400) : std::numeric_limits<T>::min(); }
  static T Infinity() { fp_only(); return is_h ? bits(0x7C00) : std::numeric_limits<T>::infinity(); }
  static T NegativeInfinity() { fp_only(); return is_h ? bits(0xFC00) : -std::numeric_limits<T>::infinity(); }
  static T QuietNaN() { fp_only(); return is_h ? bits(0x7E00) : std::numeric_limits<T>::quiet_NaN(); }
  static T SignalingNaN() { fp_only(); return is_h ? bits(0x7D00) : std::numeric_limits<T>::signaling_NaN(); }
  static T DeNormMin() { fp_only(); return is_h ? bits(0x0001) : std::numeric_limits<T>::denorm_min(); }
#define OPKIT_EMU_LIMIT_FILL(NAME)                                                              \
  static void NAME(const LocalTensor<T>& dst, uint32_t count, OPKIT_LOC) {                      \
    Duplicate(dst, NAME(), static_cast<int32_t>(count), loc);                                   \
  }
  OPKIT_EMU_LIMIT_FILL(Max) OPKIT_EMU_LIMIT_FILL(Lowest) OPKIT_EMU_LIMIT_FILL(Min) OPKIT_EMU_LIMIT_FILL(Infinity)
  OPKIT_EMU_LIMIT_FILL(NegativeInfinity) OPKIT_EMU_LIMIT_FILL(QuietNaN) OPKIT_EMU_LIMIT_FILL(SignalingNaN)
  OPKIT_EMU_LIMIT_FILL(DeNormMin)
#undef OPKIT_EMU_LIMIT_FILL

 private:
  static constexpr bool is_h = std::is_same<T, half>::value;
  static T bits(uint16_t b) {
    if constexpr (is_h) return half::FromBits(b);
    else return T();
  }
  static void fp_only() {
    static_assert(is_h || std::is_same<T, float>::value, "NumericLimits: half and float only for this limit");
  }
};
// A scalar's bits as an integer (asc-devkit 82b89a15 impl/basic_api/utils/kernel_utils_struct_norm_sort.h:221-245,
// a union read; kernels use it for DataCopyPadParams::paddingValue). CANN leaves the bytes above sizeof(T)
// unset (a union's other member); here they are zero, so a result never depends on stack garbage. Not
// constexpr: a union's inactive member is no constant expression on CANN either.
template <typename T>
inline uint64_t GetScalarBitcodeValue(T scalarValue) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "GetScalarBitcodeValue: a scalar of at most 8 bytes");
  uint64_t out = 0;
  std::memcpy(&out, &scalarValue, sizeof(T));
  return out;
}
template <typename T, typename U>
inline U GetScalarBitcodeValue(T scalarValue) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && sizeof(U) <= sizeof(uint64_t),
                "GetScalarBitcodeValue: scalars of at most 8 bytes");
  uint64_t bits = GetScalarBitcodeValue(scalarValue);  // the union's bytes, little-endian as the NPU's
  U out;
  std::memcpy(&out, &bits, sizeof(U));
  return out;
}
}  // namespace AscendC
