// CANN's lib/sort/sort.h (asc-devkit 82b89a15 include/adv_api/sort/sort.h, sort_utils.h): the SortConfig names, and
// Sort's SortConfig forms (sort.h:72-160) as a compile error: Sort.md says of them "仅在Ascend 950PR/Ascend 950DT上支持"
// (Ascend 950 only). The A2 form Sort<T, isFullSort>(dst, concat, index, tmp, repeatTime) is in opkit_emu/sort.h.
#pragma once
#include "kernel_operator.h"

namespace AscendC {
enum class SortType { RADIX_SORT, MERGE_SORT };  // include/adv_api/sort/sort_utils_constants.h:25
#ifndef ASCC_STRUCT_SORTCONFIG
#define ASCC_STRUCT_SORTCONFIG
struct SortConfig {  // sort_utils.h:29-32 (the host's tiling header, if first, adds hasSrcIndex / hasDstIndex)
  SortType type = SortType::RADIX_SORT;
  bool isDescend = false;
};
#endif
constexpr SortConfig DEFAULT_SORT_CONFIG = {SortType::RADIX_SORT, false};

namespace sort_detail {
template <class...> inline constexpr bool sort_false = false;
}
#define OPKIT_SORTCONFIG_REJECT(...)                                                                            \
  static_assert(sort_detail::sort_false<__VA_ARGS__>,                                                          \
                "not on A2: Sort with a SortConfig (RADIX_SORT / MERGE_SORT) is Ascend 950 only (Sort.md, "      \
                "\"对应带模板参数SortConfig的函数原型: 仅在Ascend 950PR/Ascend 950DT上支持\"); on A2 use "                 \
                "Sort<T, isFullSort>(dst, concat, index, tmp, repeatTime)")
template <typename T, typename U, bool isReuseSource = false, const SortConfig& config = DEFAULT_SORT_CONFIG>
void Sort(const LocalTensor<T>&, const LocalTensor<U>&, const LocalTensor<T>&, const LocalTensor<U>&,
          const LocalTensor<uint8_t>&, const uint32_t) { OPKIT_SORTCONFIG_REJECT(T, U); }
template <typename T, typename U, bool isReuseSource = false, const SortConfig& config = DEFAULT_SORT_CONFIG>
void Sort(const LocalTensor<T>&, const LocalTensor<U>&, const LocalTensor<T>&, const LocalTensor<U>&,
          const uint32_t) { OPKIT_SORTCONFIG_REJECT(T, U); }
template <typename T, typename U, bool isReuseSource = false, const SortConfig& config = DEFAULT_SORT_CONFIG>
void Sort(const LocalTensor<T>&, const LocalTensor<U>&, const LocalTensor<T>&, const LocalTensor<uint8_t>&,
          const uint32_t) { OPKIT_SORTCONFIG_REJECT(T, U); }
template <typename T, bool isReuseSource = false, const SortConfig& config = DEFAULT_SORT_CONFIG>
void Sort(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint8_t>&, const uint32_t) {
  OPKIT_SORTCONFIG_REJECT(T);
}
template <typename T, bool isReuseSource = false, const SortConfig& config = DEFAULT_SORT_CONFIG>
void Sort(const LocalTensor<T>&, const LocalTensor<T>&, const uint32_t) { OPKIT_SORTCONFIG_REJECT(T); }
#undef OPKIT_SORTCONFIG_REJECT
}  // namespace AscendC
