// Host side of CANN's TopK tiling (asc-devkit 82b89a15 include/adv_api/sort/topk_tiling.h, the struct
// topk_tilingdata.h:15-48), reached through tiling/tiling_api.h as CANN's includes "sort/topk_tiling.h":
// optiling::TopkTiling, TopKTilingFunc (both overloads: optiling::TopkTiling and AscendC::tiling::TopkTiling) and
// GetTopKMaxMinTmpSize, written after impl/adv_api/tiling/sort/topk_tiling_impl.cpp (read, not copied), the A2 branch
// (DAV_2201: GetTopKMaxMinTmpSize220 :164-208, SetTopkNormalVal :257-305, SetTopkNSmallVal :321-345,
// GetVreduceMask :95-133). The argument checks (CheckTopKHostCommon :431-466, k in [1, inner] :597-598) log and go on
// in CANN; here they print the same message to stderr and go on. The kernel runs TopK on the emulator
// (lib/sort/topk.h), which enforces the minimum below on its tmpLocal.
#pragma once
#include <cstdint>
#include <cstdio>

#include "opkit/adv_tiling_structs.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(TopkTiling)
TILING_DATA_FIELD_DEF(int32_t, tmpLocalSize);
TILING_DATA_FIELD_DEF(int32_t, allDataSize);
TILING_DATA_FIELD_DEF(int32_t, innerDataSize);
TILING_DATA_FIELD_DEF(uint32_t, sortRepeat);
TILING_DATA_FIELD_DEF(int32_t, mrgSortRepeat);
TILING_DATA_FIELD_DEF(int32_t, kAlignFourBytes);
TILING_DATA_FIELD_DEF(int32_t, kAlignTwoBytes);
TILING_DATA_FIELD_DEF(int32_t, maskOffset);
TILING_DATA_FIELD_DEF(int32_t, maskVreducev2FourBytes);
TILING_DATA_FIELD_DEF(int32_t, maskVreducev2TwoBytes);
TILING_DATA_FIELD_DEF(int32_t, mrgSortSrc1offset);
TILING_DATA_FIELD_DEF(int32_t, mrgSortSrc2offset);
TILING_DATA_FIELD_DEF(int32_t, mrgSortSrc3offset);
TILING_DATA_FIELD_DEF(int32_t, mrgSortTwoQueueSrc1Offset);
TILING_DATA_FIELD_DEF(int32_t, mrgFourQueueTailPara1);
TILING_DATA_FIELD_DEF(int32_t, mrgFourQueueTailPara2);
TILING_DATA_FIELD_DEF(int32_t, srcIndexOffset);
TILING_DATA_FIELD_DEF(uint32_t, copyUbToUbBlockCount);
TILING_DATA_FIELD_DEF(int32_t, topkMrgSrc1MaskSizeOffset);
TILING_DATA_FIELD_DEF(int32_t, topkNSmallSrcIndexOffset);
TILING_DATA_FIELD_DEF(uint32_t, vreduceValMask0);
TILING_DATA_FIELD_DEF(uint32_t, vreduceValMask1);
TILING_DATA_FIELD_DEF(uint32_t, vreduceIdxMask0);
TILING_DATA_FIELD_DEF(uint32_t, vreduceIdxMask1);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask0);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask1);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask2);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask3);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask4);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask5);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask6);
TILING_DATA_FIELD_DEF(uint16_t, vreducehalfValMask7);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
#ifndef OPKIT_TOPK_MODE_DEFINED
#define OPKIT_TOPK_MODE_DEFINED
enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };  // include/adv_api/sort/topk_utils_constants.h
#endif

namespace topk_host_detail {
// a mask of k bit pairs "10" / "01", of k nibbles "0001", of k ones (topk_tiling_impl.cpp:64-93)
inline uint32_t pairs(int32_t k, uint32_t unit) {
  uint32_t m = 0;
  for (int32_t i = 0; i < k; ++i) m = (m << 2u) | unit;
  return m;
}
inline uint16_t nibbles(int32_t k) {
  uint16_t m = 0;
  for (int32_t i = 0; i < k; ++i) m = static_cast<uint16_t>((m << 4u) | 1u);
  return m;
}
// the masks the small mode's GatherMask takes (GetVreduceMask :95-133)
inline void vreduce_masks(int32_t k, uint32_t size, optiling::TopkTiling& t) {
  if (k < 17) t.set_vreduceIdxMask0(pairs(k, 2));
  if (k >= 17 && k <= 32) t.set_vreduceIdxMask0(2863311530u), t.set_vreduceIdxMask1(pairs(k - 16, 2));
  if (size == 4) {
    if (k < 17) t.set_vreduceValMask0(pairs(k, 1));
    if (k >= 17 && k <= 32) t.set_vreduceValMask0(pairs(16, 1)), t.set_vreduceValMask1(pairs(k - 16, 1));
    return;
  }
  // half: 4 values per 16-bit mask word, word w covering k in (4w, 4w + 4]
  auto word = [&](int32_t w) -> uint16_t {
    const int32_t left = k - 4 * w;
    return left <= 0 ? 0 : left >= 4 ? (w == 0 ? 4369 : nibbles(4)) : nibbles(left);
  };
  t.set_vreducehalfValMask0(word(0)), t.set_vreducehalfValMask1(word(1)), t.set_vreducehalfValMask2(word(2));
  t.set_vreducehalfValMask3(word(3)), t.set_vreducehalfValMask4(word(4)), t.set_vreducehalfValMask5(word(5));
  t.set_vreducehalfValMask6(word(6)), t.set_vreducehalfValMask7(word(7));
}
inline void check(const char* fn, const platform_ascendc::PlatformAscendC& p, int32_t inner, int32_t outter,
                  TopKMode mode, uint32_t size) {
  uint64_t ub = 0;
  p.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
  const char* why = inner <= 0 ? "The length of the inner axis must be greater than 0!"
                    : inner % 32 ? "The length of the inner axis must be a multiple of 32!"
                    : mode == TopKMode::TOPK_NSMALL && inner != 32 ? "In Small mode, the length of the inner axis must be 32!"
                    : outter <= 0 ? "The length of the outter axis must be greater than 0!"
                    : uint64_t(inner) * uint64_t(outter) * size > ub ? "The size of srcShape should be less than UB size."
                    : size != 2 && size != 4 ? "Type size is unsupported (2: half, 4: float)!"
                                             : nullptr;
  if (why) std::fprintf(stderr, "[TopK][%s] %s\n", fn, why);
}
// the A2 tiling (TopKTilingFunc :395-428 -> SetTopkNormalVal / SetTopkNSmallVal)
inline void fill(int32_t inner, int32_t outter, int32_t k, uint32_t size, bool isInitIndex, TopKMode mode,
                 bool isLargest, optiling::TopkTiling& t) {
  t.set_allDataSize(inner * outter);
  const int32_t k4 = (k + 7) / 8 * 8, k2 = (k + 15) / 16 * 16;
  t.set_kAlignFourBytes(k4);
  if (mode == TopKMode::TOPK_NORMAL) {
    const bool h = size == 2;
    t.set_tmpLocalSize((h ? 8 : 4) * inner);  // inner x 16 bytes of sorted pairs, in T elements
    t.set_innerDataSize(inner * (h ? 4 : 2));
    t.set_copyUbToUbBlockCount(static_cast<uint32_t>(inner * 2 * 4 / 32));
    t.set_sortRepeat(static_cast<uint32_t>(inner / 32));
    t.set_mrgSortRepeat(inner / 4);
    t.set_kAlignTwoBytes(k2);
    t.set_maskOffset(outter * (h ? k2 : k4));
    t.set_maskVreducev2FourBytes(2 * k);
    t.set_maskVreducev2TwoBytes(4 * k);
    t.set_mrgSortSrc1offset(h ? 4 : 2);
    t.set_mrgSortSrc2offset(h ? 8 : 4);
    t.set_mrgSortSrc3offset(h ? 12 : 6);
    t.set_mrgSortTwoQueueSrc1Offset(h ? 4 : 2);
    t.set_mrgFourQueueTailPara1(inner * 2);
    t.set_mrgFourQueueTailPara2(static_cast<int32_t>(4 / size));
    if (!isInitIndex) {
      t.set_tmpLocalSize(h ? 8 * inner + 2 * inner : 4 * inner + inner);  // + the generated int32 indexes
      t.set_srcIndexOffset(h ? 8 * inner : 4 * inner);
    }
    return;
  }
  const int32_t innerData = inner * outter * static_cast<int32_t>(8 / size);
  t.set_innerDataSize(innerData);
  t.set_maskOffset(outter * k);
  const int32_t mrgOff = innerData + (isLargest ? 0 : inner * outter);  // + the negated copy for ascending
  t.set_topkMrgSrc1MaskSizeOffset(mrgOff);
  t.set_tmpLocalSize(mrgOff + 64 / static_cast<int32_t>(size));       // + 64 bytes of GatherMask patterns
  if (!isInitIndex) {
    const int32_t idxOff = mrgOff + 64 / static_cast<int32_t>(size);
    t.set_tmpLocalSize(idxOff + inner * outter * 4 / static_cast<int32_t>(size));
    t.set_topkNSmallSrcIndexOffset(idxOff);
  }
  vreduce_masks(k, size, t);
}
}  // namespace topk_host_detail

// Bytes of tmpLocal TopK needs on A2 (max == min): GetTopKMaxMinTmpSize220 (:164-208)
inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                                 const int32_t outter, const bool isReuseSource, const bool isInitIndex,
                                 enum TopKMode mode, const bool isLargest, const uint32_t dataTypeSize,
                                 uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  topk_host_detail::check("GetTopKMaxMinTmpSize", ascendcPlatform, inner, outter, mode, dataTypeSize);
  const uint32_t in = static_cast<uint32_t>(inner), all = static_cast<uint32_t>(inner * outter);
  if (mode == TopKMode::TOPK_NORMAL) {
    minValue = (isInitIndex ? 16u : 20u) * in;  // 16 bytes of sorted pairs per element (+ 4 of generated index)
  } else {
    minValue = all * 8 + 64 + (isLargest ? 0 : all * 4) + (isInitIndex ? 0 : all * 4);
  }
  maxValue = minValue;
  return true;
}

inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                           const int32_t outter, const int32_t k, const uint32_t dataTypeSize, const bool isInitIndex,
                           enum TopKMode mode, const bool isLargest, optiling::TopkTiling& topKTiling) {
  topk_host_detail::check("TopKTilingFunc", ascendcPlatform, inner, outter, mode, dataTypeSize);
  if (k < 1 || k > inner) std::fprintf(stderr, "[TopK][TopKTilingFunc] The range of value k is [1, %d]!\n", inner);
  if (dataTypeSize == 0) return false;
  topk_host_detail::fill(inner, outter, k, dataTypeSize, isInitIndex, mode, isLargest, topKTiling);
  return true;
}
inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                           const int32_t outter, const int32_t k, const uint32_t dataTypeSize, const bool isInitIndex,
                           enum TopKMode mode, const bool isLargest, AscendC::tiling::TopkTiling& topKTiling) {
  optiling::TopkTiling t;
  const bool ok = TopKTilingFunc(ascendcPlatform, inner, outter, k, dataTypeSize, isInitIndex, mode, isLargest, t);
  t.SaveToBuffer(&topKTiling, sizeof(AscendC::tiling::TopkTiling));
  return ok;
}
}  // namespace AscendC
