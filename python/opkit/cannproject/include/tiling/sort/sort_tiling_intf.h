// Host side of CANN's Sort queries (asc-devkit 82b89a15 include/adv_api/sort/sort_tiling_intf.h:19-59), reached
// through tiling/tiling_api.h as CANN's includes "sort/sort_tiling_intf.h". Written after
// impl/adv_api/tiling/sort/sort_tiling_impl.cpp (read, not copied), for the chip the emulator runs (A2, DAV_2201):
//  - GetConcatTmpSize: 0 on A2 (:120-130: Concat moves no data there).
//  - GetSortTmpSize: elemCount x 2 (float) / x 4 (half) x dataTypeSize bytes on A2 (:132-146).
//  - GetSortMaxMinTmpSize (the SortConfig form's query): CANN asserts DAV_3510 / DAV_5102 and, on A2, logs
//    "Unsupported NpuArch for Sort API." and returns without writing maxValue / minValue (:48-52; ASCENDC_HOST_ASSERT
//    with `return`, impl/adv_api/detail/host_log.h:48-58). The stand-in does the same, the message on stderr: the
//    SortConfig form of Sort is Ascend 950 only (Sort.md, "对应带模板参数SortConfig的函数原型 仅在Ascend 950PR/Ascend 950DT上支持").
#pragma once
#include <cstdint>
#include <cstdio>

#include "opkit_cann/host.h"
#include "tiling/platform/platform_ascendc.h"

namespace AscendC {
using TensorShape = ge::Shape;
using TensorDataType = ge::DataType;

constexpr uint32_t REGION_PROPOSAL_DATA_SIZE_V200 = 8;
constexpr uint32_t REGION_PROPOSAL_DATA_SIZE_HALF_V220 = 4;
constexpr uint32_t REGION_PROPOSAL_DATA_SIZE_FLOAT_V220 = 2;

#ifndef ASCC_STRUCT_SORTCONFIG
#define ASCC_STRUCT_SORTCONFIG
enum class SortType { RADIX_SORT, MERGE_SORT };  // include/adv_api/sort/sort_utils_constants.h:25
struct SortConfig {                              // sort_tiling_intf.h:48-53
  SortType type = SortType::RADIX_SORT;
  bool isDescend = false;
  bool hasSrcIndex = false;
  bool hasDstIndex = false;
};
#endif

namespace sort_host_detail {
// CheckSortHostCommon (sort_tiling_impl.cpp:24-41): CANN logs and goes on; so does the stand-in
inline void check(const char* fn, const platform_ascendc::PlatformAscendC& p, uint32_t elemCount, uint32_t size) {
  uint64_t ub = 0;
  p.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
  if (elemCount == 0) std::fprintf(stderr, "[Sort][%s] The elemCount must be greater than 0.\n", fn);
  if (size != 2 && size != 4) std::fprintf(stderr, "[Sort][%s] Type size %u is unsupported!\n", fn, size);
  if (uint64_t(elemCount) * size >= ub)
    std::fprintf(stderr, "[Sort][%s] The size of srcShape is %lluB, should be less than UB size.\n", fn,
                 static_cast<unsigned long long>(uint64_t(elemCount) * size));
}
inline bool v220_like(const platform_ascendc::PlatformAscendC& p) {
  const NpuArch a = p.GetCurNpuArch();
  return a == NpuArch::DAV_2201 || a == NpuArch::DAV_3510 || a == NpuArch::DAV_3003;
}
}  // namespace sort_host_detail

inline uint32_t GetConcatTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const uint32_t elemCount,
                                 const uint32_t dataTypeSize) {
  sort_host_detail::check("GetConcatTmpSize", ascendcPlatform, elemCount, dataTypeSize);
  return sort_host_detail::v220_like(ascendcPlatform) ? 0 : elemCount * REGION_PROPOSAL_DATA_SIZE_V200 * dataTypeSize;
}

inline uint32_t GetSortTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const uint32_t elemCount,
                               const uint32_t dataTypeSize) {
  sort_host_detail::check("GetSortTmpSize", ascendcPlatform, elemCount, dataTypeSize);
  if (!sort_host_detail::v220_like(ascendcPlatform)) return elemCount * REGION_PROPOSAL_DATA_SIZE_V200 * dataTypeSize;
  return elemCount * (dataTypeSize == sizeof(float) ? REGION_PROPOSAL_DATA_SIZE_FLOAT_V220
                                                    : REGION_PROPOSAL_DATA_SIZE_HALF_V220) * dataTypeSize;
}

inline void GetSortMaxMinTmpSize(const TensorShape& srcShape, TensorDataType valueType, TensorDataType indexType,
                                 bool isReuseSource, const SortConfig& config, uint32_t& maxValue,
                                 uint32_t& minValue) {
  (void)srcShape, (void)valueType, (void)indexType, (void)isReuseSource, (void)config, (void)maxValue,
      (void)minValue;
  // the emulator's chip is the A2 (PlatformAscendCManager::GetInstance()), where CANN stops here
  std::fprintf(stderr,
               "[Sort][GetSortMaxMinTmpSize] Unsupported NpuArch for Sort API. (CANN accepts DAV_3510 / DAV_5102 only "
               "and, on the A2, returns leaving maxValue and minValue unwritten: asc-devkit 82b89a15 "
               "impl/adv_api/tiling/sort/sort_tiling_impl.cpp:48-52)\n");
}
}  // namespace AscendC
