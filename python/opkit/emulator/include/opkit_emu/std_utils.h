// AscendC::Std: the standard-library subset CANN's kernels use under CANN's own namespace (asc-devkit 82b89a15
// include/utils/std/{type_traits,tuple,utility,algorithm,cmath}.h: the C++ standard's names and meanings --
// is_same(_v), enable_if_t, conditional_t, remove_cvref_t, integral_constant, bool_constant, tuple, get, ...).
// On the host they are the standard library's own, so the namespace nominates std; declared here are the names
// CANN's differ in: min / max of two types (impl/utils/std/algorithm/min.h: `(a < b) ? a : b`, the common
// type of the operands), always_false_v, and the cmath names (below).
#pragma once
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "opkit_emu/host_math.h"

namespace AscendC {
namespace Std {
using namespace ::std;
template <typename T, typename U>
constexpr auto min(const T& src0, const U& src1) {
  return (src0 < src1) ? src0 : src1;
}
template <typename T, typename U>
constexpr auto max(const T& src0, const U& src1) {
  return (src0 > src1) ? src0 : src1;
}
template <typename... T>
inline constexpr bool always_false_v = false;
// include/utils/std/cmath.h: sqrt (float, int64_t) and abs (int8..int64, float) -- CANN's types only -- and the
// integer helpers (impl/utils/std/cmath/{sqrt,abs,ceil_division,ceil_align,divide}.h). Declared here, not taken
// from <cmath>, which would put the C library's names at global scope (opkit_emu/host_math.h says why).
template <typename T>
inline T sqrt(const T src) {
  static_assert(is_same_v<T, float> || is_same_v<T, int64_t>, "Std::sqrt: float or int64_t (CANN's cmath/sqrt.h)");
  return static_cast<T>(::opkit_emu::hm::sqrt(static_cast<std::conditional_t<is_same_v<T, float>, float, double>>(src)));
}
template <typename T>
inline T abs(const T src) {
  static_assert(is_same_v<T, int8_t> || is_same_v<T, int16_t> || is_same_v<T, int32_t> || is_same_v<T, float> ||
                    is_same_v<T, int64_t>,
                "Std::abs: int8_t, int16_t, int32_t, float or int64_t (CANN's cmath/abs.h)");
  if constexpr (is_same_v<T, float>) return ::opkit_emu::hm::fabs(src);
  else return static_cast<T>(src < 0 ? -src : src);
}
template <typename T, typename U>
inline constexpr auto ceil_division(const T& num1, const U& num2) {
  return (num1 + num2 - 1) / num2;
}
template <typename T, typename U>
inline constexpr auto ceil_align(const T& num1, const U& num2) {
  return ceil_division(num1, num2) * num2;
}
template <typename T, typename U>
inline constexpr auto divide(const T& num1, const U& num2) {
  return num1 / num2;
}
// C++20's remove_cvref in a C++17 build (impl/utils/std/type_traits/remove_cvref.h)
template <typename T>
struct remove_cvref {
  using type = remove_cv_t<remove_reference_t<T>>;
};
template <typename T>
using remove_cvref_t = typename remove_cvref<T>::type;
// CANN's own traits (impl/utils/std/type_traits/is_one_of.h, is_tuple.h), written here after their meaning
template <typename T, typename... Args>
struct is_one_of : bool_constant<(is_same_v<T, Args> || ...)> {};
template <typename T, typename... Args>
inline constexpr bool is_one_of_v = is_one_of<T, Args...>::value;
template <typename T, T Value, T... Values>
struct is_one_of_value : bool_constant<((Value == Values) || ...)> {};
template <typename T, T... Values>
inline constexpr bool is_one_of_value_v = is_one_of_value<T, Values...>::value;
template <typename T, typename = void>
struct is_tuple : false_type {};
template <typename T>
struct is_tuple<T, void_t<decltype(tuple_size<T>::value)>> : true_type {};
template <typename T>
inline constexpr bool is_tuple_v = is_tuple<T>::value;
}  // namespace Std
}  // namespace AscendC
