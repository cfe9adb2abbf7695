// The row layout the SoftMax family's tilings share (asc-devkit 82b89a15 impl/adv_api/tiling/activation/
// softmax_tiling.cpp: SoftMaxTilingFunc and AdjustToBasicBlockBaseM; the kernel-side SoftMaxFlashV2TilingFuncImpl,
// impl/adv_api/detail/activation/softmax/softmax_flashv2_base_impl.h:42-105 with CalculateNDSplitM,
// softmax_common/softmax_common_shape_process.h:59-80 -- read, not copied): the rows one pass takes, cut to whole
// tiles and to basic blocks where the shape allows, and the fields a SoftMaxTiling holds for an [m, k] source.
// One constexpr header for both sides: the host stand-in's tiling functions (cannproject tiling/activation/*.h) and
// the emulator's kernel-side SoftMaxFlashV2TilingFuncImpl (opkit_emu/softmax_flashv2_tiling.h).
// CANN declares each host tiling function twice, for the host class optiling::SoftMaxTiling (set_* members) and the
// kernel's plain AscendC::tiling::SoftMaxTiling (asc-devkit 82b89a15 include/adv_api/activation/softmax_tiling.h:
// 52-58, 82-90, 218-226); `fill` writes either.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace opkit {
namespace softmax_rows {
constexpr uint32_t kTile = 8, kUnit = 64, kBasicMin = 256;  // a basic block: 8 rows, 64 columns, < 255 repeats

// AdjustToBasicBlockBaseM / CalculateNDSplitM's basic branch: whole basic tiles that divide m, at most 255 repeats
// a pass.
constexpr uint32_t basic_block_rows(uint32_t baseM, uint32_t m, uint32_t k) {
  if (baseM > kTile && m % kTile == 0 && k % kUnit == 0) {
    baseM = baseM / kTile * kTile;
    while (m % baseM != 0) baseM -= kTile;
    while (baseM * k >= kUnit * kBasicMin) baseM /= 2;
  }
  return baseM;
}

// At most m rows, whole tiles of `tile` rows below m.
constexpr uint32_t whole_tiles(uint32_t baseM, uint32_t m, uint32_t tile = kTile) {
  baseM = std::min(baseM, m);
  if (baseM < m && baseM > tile) baseM = baseM / tile * tile;
  return baseM;
}

// Rows per pass when the work buffer holds `fit` rows: at most m, whole tiles below m, basic blocks where allowed.
constexpr uint32_t rows_per_pass(uint32_t fit, uint32_t m, uint32_t k) {
  return basic_block_rows(whole_tiles(fit, m), m, k);
}

template <class T, class = void>
struct has_setters : std::false_type {};
template <class T>
struct has_setters<T, std::void_t<decltype(std::declval<T&>().set_srcM(0u))>> : std::true_type {};

// The SoftMaxTiling fields for [m, k] taken baseM rows a pass, sum / max one block of `blk` elements per row.
#define OPKIT_SOFTMAX_ROWS_SET(name, v)                  \
  do {                                                     \
    if constexpr (has_setters<SoftMaxTilingT>::value)      \
      t.set_##name(v);                                     \
    else                                                   \
      t.name = (v);                                        \
  } while (0)
template <class SoftMaxTilingT>
constexpr void fill(SoftMaxTilingT& t, uint32_t m, uint32_t k, uint32_t blk, uint32_t baseM) {
  OPKIT_SOFTMAX_ROWS_SET(srcM, m);
  OPKIT_SOFTMAX_ROWS_SET(srcK, k);
  OPKIT_SOFTMAX_ROWS_SET(srcSize, m * k);
  OPKIT_SOFTMAX_ROWS_SET(outMaxM, m);
  OPKIT_SOFTMAX_ROWS_SET(outMaxK, blk);
  OPKIT_SOFTMAX_ROWS_SET(outMaxSize, m * blk);
  OPKIT_SOFTMAX_ROWS_SET(splitM, baseM);
  OPKIT_SOFTMAX_ROWS_SET(splitK, k);
  OPKIT_SOFTMAX_ROWS_SET(splitSize, baseM * k);
  OPKIT_SOFTMAX_ROWS_SET(reduceM, baseM);
  OPKIT_SOFTMAX_ROWS_SET(reduceK, blk);
  OPKIT_SOFTMAX_ROWS_SET(reduceSize, baseM * blk);
  const uint32_t tail = baseM ? m % baseM : 0;
  if (baseM) OPKIT_SOFTMAX_ROWS_SET(rangeM, m / baseM);
  OPKIT_SOFTMAX_ROWS_SET(tailM, tail);
  OPKIT_SOFTMAX_ROWS_SET(tailSplitSize, tail * k);
  OPKIT_SOFTMAX_ROWS_SET(tailReduceSize, tail * blk);
}
#undef OPKIT_SOFTMAX_ROWS_SET
}  // namespace softmax_rows
}  // namespace opkit
