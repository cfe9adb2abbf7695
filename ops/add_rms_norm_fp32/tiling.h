// Rendered by opkit from templates/families/fused/tiling.h.j2 for AddRmsNormFP32 (norm=rms).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// Tiling for AddRmsNormFP32 (sum = x + residual, out = RMSNorm(sum)): rows of x split across vector
// cores, each core walks its rows in UB tiles. Two layouts:
//  - single pass: a tile holds `tileRows` whole rows (row pitch `stride`, 32 B aligned), x and
//    residual are read from GM once;
//  - multi pass (rows too long for UB): one row at a time in column tiles of `tileCols` elements,
//    x and residual read twice (sum + sum of squares, then scale).
#pragma once
#include <cstdint>

struct AddRmsNormFP32TilingData {
  uint32_t rows;           // product of the leading dims
  uint32_t cols;           // normalised length C
  uint32_t stride;         // UB row pitch in elements: cols rounded up to 32 B of the I/O dtype
  uint32_t rowsPerBlock;   // every block gets this many rows ...
  uint32_t remainderRows;  // ... and blocks [0, remainderRows) one more
  uint32_t tileRows;       // single pass: rows per UB tile
  uint32_t tileCols;       // multi pass: columns per UB tile (multiple of 64); 0 = single pass
  float eps;
};

#ifndef __CCE_AICORE__
#include <algorithm>
#include <stdexcept>

#include "opkit/tiling_util.h"

inline void AddRmsNormFP32Tiling(opkit::TilingContext& ctx, AddRmsNormFP32TilingData& t) {
  const opkit::TensorInfo& x = ctx.inputs.at(0);
  const uint64_t io = x.elem_size();
  const bool cast = io != 4;   // FP32 copies are needed when the I/O dtype is not FP32
  const uint64_t cols = x.rank() == 0 ? 1 : static_cast<uint64_t>(x.dim(-1));
  const uint64_t rows = cols == 0 ? 0 : static_cast<uint64_t>(x.numel()) / cols;
  if (rows > UINT32_MAX || cols > UINT32_MAX)
    throw std::invalid_argument("AddRmsNormFP32Tiling: x has more than 2^32 rows or columns");
  t = AddRmsNormFP32TilingData{};
  t.rows = static_cast<uint32_t>(rows);
  t.cols = static_cast<uint32_t>(cols);
  t.eps = static_cast<float>(ctx.attr_float("eps"));
  t.stride = static_cast<uint32_t>(opkit::align_up(std::max<uint64_t>(cols, 1), opkit::kBlockBytes / io));

  // Rows across cores, at most one apart (opkit/tiling_util.h).
  const uint64_t maxBlockRows = opkit::SplitRows(ctx, rows, t);

  // UB per column, assuming FP32 compute (the naive variant needs less): x, residual in and sum, out
  // out (double-buffered) plus an FP32 copy of the sum scale with the rows of a tile; the weight (I/O
  // dtype + FP32 copy) and one FP32 row (residual cast, squares) do not. Small buffers: ReduceSum
  // result + work area, rstd and ones per tile row.
  const uint64_t budget = ctx.platform.ub_usable_bytes;
  const uint64_t perTileCol = 8 * io + (cast ? 4 : 0);
  const uint64_t perFixedCol = io + (cast ? 4 : 0) + 4;
  auto smallBytes = [](uint64_t len, uint64_t rowsInTile) {
    return opkit::kBlockBytes + opkit::align_up(opkit::ceil_div(len, 64) * 4, 32) +
           2 * opkit::align_up(rowsInTile * 4, 32);
  };
  const uint64_t fixedBytes = t.stride * perFixedCol;
  if (fixedBytes + t.stride * perTileCol + smallBytes(t.stride, 1) <= budget) {
    uint64_t r = (budget - fixedBytes - smallBytes(t.stride, 0)) / (t.stride * perTileCol + 8);
    r = opkit::LargestFitting(
        std::min<uint64_t>({r, maxBlockRows, 1024}),
        [&](uint64_t n) { return fixedBytes + n * t.stride * perTileCol + smallBytes(t.stride, n) <= budget; });
    t.tileRows = static_cast<uint32_t>(r);
    t.tileCols = 0;
    return;
  }
  // Multi pass: the largest multiple of 64 columns (256 B of FP32) that fits.
  const uint64_t perCol = perTileCol + perFixedCol;
  const uint64_t c = (budget - smallBytes(budget / perCol, 1)) / perCol / 64 * 64;
  if (c < 64) throw std::invalid_argument("AddRmsNormFP32Tiling: UB too small for one 64-column tile");
  t.tileRows = 1;
  t.tileCols = static_cast<uint32_t>(c);
}
#endif  // __CCE_AICORE__
