// The row layout the SoftMax family's tilings share (asc-devkit 82b89a15 impl/adv_api/tiling/activation/
// softmax_tiling.cpp: SoftMaxTilingFunc and AdjustToBasicBlockBaseM, read, not copied): the rows one pass takes, cut
// to basic blocks where the shape allows, and the fields a SoftMaxTiling holds for an [m, k] source.
#pragma once
#include <algorithm>
#include <cstdint>

namespace AscendC {
namespace softmax_rows {
constexpr uint32_t kTile = 8, kUnit = 64, kBasicMin = 256;  // a basic block: 8 rows, 64 columns, < 255 repeats

// AdjustToBasicBlockBaseM: whole basic tiles that divide m, at most 255 repeats a pass.
inline uint32_t basic_block_rows(uint32_t baseM, uint32_t m, uint32_t k) {
  if (baseM > kTile && m % kTile == 0 && k % kUnit == 0) {
    baseM = baseM / kTile * kTile;
    while (m % baseM != 0) baseM -= kTile;
    while (baseM * k >= kUnit * kBasicMin) baseM /= 2;
  }
  return baseM;
}

// Rows per pass when the work buffer holds `fit` rows: at most m, whole tiles below m, basic blocks where allowed.
inline uint32_t rows_per_pass(uint32_t fit, uint32_t m, uint32_t k) {
  uint32_t baseM = std::min(fit, m);
  if (baseM < m && baseM > kTile) baseM = baseM / kTile * kTile;
  return basic_block_rows(baseM, m, k);
}

// The SoftMaxTiling fields for [m, k] taken baseM rows a pass, sum / max one block of `blk` elements per row.
template <class SoftMaxTilingT>
inline void fill(SoftMaxTilingT& t, uint32_t m, uint32_t k, uint32_t blk, uint32_t baseM) {
  t.set_srcM(m);
  t.set_srcK(k);
  t.set_srcSize(m * k);
  t.set_outMaxM(m);
  t.set_outMaxK(blk);
  t.set_outMaxSize(m * blk);
  t.set_splitM(baseM);
  t.set_splitK(k);
  t.set_splitSize(baseM * k);
  t.set_reduceM(baseM);
  t.set_reduceK(blk);
  t.set_reduceSize(baseM * blk);
  const uint32_t tail = baseM ? m % baseM : 0;
  if (baseM) t.set_rangeM(m / baseM);
  t.set_tailM(tail);
  t.set_tailSplitSize(tail * k);
  t.set_tailReduceSize(tail * blk);
}
}  // namespace softmax_rows
}  // namespace AscendC
