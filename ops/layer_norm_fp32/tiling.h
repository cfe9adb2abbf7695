// Rendered by opkit from templates/families/norm/tiling.h.j2 for LayerNormFP32 (norm=layer, backward=false).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// Tiling for LayerNormFP32: rows of x (all dims but the last) are split across vector cores, each
// core walks its rows in UB tiles. Two layouts:
//  - single pass: a tile holds `tileRows` whole rows (row pitch `stride`, 32 B aligned), the row is
//    read from GM once;
//  - multi pass (rows too long for UB): one row at a time in column tiles of `tileCols` elements,
//    read three times (mean estimate, centred sums, normalise).
#pragma once
#include <cstdint>

struct LayerNormFP32TilingData {
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
#include <string>

#include "opkit/tiling_util.h"

// UB bytes the kernel asks for, per column of a tile (both layouts need the same, assuming FP32
// compute, which is the larger case; the naive variant computes in the I/O dtype and needs less):
// x in + y out (double-buffered) + weight/bias staging in the I/O dtype, an FP32 copy of x, of the
// weight and of the bias when the I/O dtype is not FP32, and one FP32 row of squares.
inline uint64_t LayerNormFP32BytesPerCol(uint64_t io) {
  return 2 * io + 2 * io + 2 * io + (io == 4 ? 0 : 3 * 4) + 4;
}

inline void LayerNormFP32Tiling(opkit::TilingContext& ctx, LayerNormFP32TilingData& t) {
  const opkit::TensorInfo& x = ctx.inputs.at(0);
  const uint64_t io = x.elem_size();
  const uint64_t cols = x.rank() == 0 ? 1 : static_cast<uint64_t>(x.dim(-1));
  const uint64_t rows = cols == 0 ? 0 : static_cast<uint64_t>(x.numel()) / cols;
  if (rows > UINT32_MAX || cols > UINT32_MAX)
    throw std::invalid_argument("LayerNormFP32Tiling: x has more than 2^32 rows or columns");
  t = LayerNormFP32TilingData{};
  t.rows = static_cast<uint32_t>(rows);
  t.cols = static_cast<uint32_t>(cols);
  t.eps = static_cast<float>(ctx.attr_float("eps"));
  const uint64_t perBlock32 = opkit::kBlockBytes / io;   // elements in one 32 B block
  t.stride = static_cast<uint32_t>(opkit::align_up(std::max<uint64_t>(cols, 1), perBlock32));

  // Rows across cores, at most one apart (opkit/tiling_util.h).
  const uint64_t maxBlockRows = opkit::SplitRows(ctx, rows, t);

  // Fixed small buffers: ReduceSum result + its work area, and three per-row stat vectors.
  const uint64_t budget = ctx.platform.ub_usable_bytes;
  const uint64_t perCol = LayerNormFP32BytesPerCol(io);
  auto smallBytes = [](uint64_t len, uint64_t rowsInTile) {
    const uint64_t red = opkit::kBlockBytes + opkit::align_up(opkit::ceil_div(len, 64) * 4, 32);
    return red + 3 * opkit::align_up(rowsInTile * 4, 32);
  };
  // Single pass: weight/bias/squares are one row; x, y and their FP32 copy scale with tileRows.
  const uint64_t perRowBytes = t.stride * (4 * io + (io == 4 ? 0 : 4));
  const uint64_t fixedBytes = t.stride * (perCol - 4 * io - (io == 4 ? 0 : 4));
  if (fixedBytes + perRowBytes + smallBytes(t.stride, 1) <= budget) {
    uint64_t r = (budget - fixedBytes - smallBytes(t.stride, 0)) / (perRowBytes + 4);
    r = opkit::LargestFitting(
        std::min<uint64_t>({r, maxBlockRows, 1024}),
        [&](uint64_t n) { return fixedBytes + n * perRowBytes + smallBytes(t.stride, n) <= budget; });
    t.tileRows = static_cast<uint32_t>(r);
    t.tileCols = 0;
    return;
  }
  // Multi pass: the largest multiple of 64 columns (256 B of FP32) that fits.
  uint64_t c = (budget - smallBytes(budget / perCol, 1)) / perCol / 64 * 64;
  if (c < 64) throw std::invalid_argument("LayerNormFP32Tiling: UB too small for one 64-column tile");
  t.tileRows = 1;
  t.tileCols = static_cast<uint32_t>(c);
}
#endif  // __CCE_AICORE__
