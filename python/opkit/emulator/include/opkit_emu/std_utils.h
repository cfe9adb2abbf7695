// AscendC::Std: the standard-library subset CANN's kernels use under CANN's own namespace (asc-devkit 82b89a15
// include/utils/std/{type_traits,tuple,utility,algorithm,cmath}.h: the C++ standard's names and meanings --
// is_same(_v), enable_if_t, conditional_t, remove_cvref_t, integral_constant, bool_constant, tuple, get, ...).
// On the host they are the standard library's own, so the namespace nominates std; declared here are the names
// CANN's differ in: min / max of two types (impl/utils/std/algorithm/min.h: `(a < b) ? a : b`, the common
// type of the operands) and always_false_v.
#pragma once
#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

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
