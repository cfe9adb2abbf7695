// Rendered by opkit from templates/families/reduce/tiling.h.j2 for ReduceMaxFP32 (reduce=max).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// Tiling for ReduceMaxFP32: max and first arg-max over the last dim.
// Rows (all dims but the last; the binding has moved `dim` there) are split across vector cores, each
// core walks its rows in UB tiles. Two layouts:
//  - single pass: a tile holds `tileRows` whole rows (row pitch `stride`, 32 B aligned), each row is
//    read from GM once;
//  - multi pass (a row too long for UB): one row at a time in column tiles of `tileCols` elements,
//    read once per sweep (one sweep, tile maxima merged in order).
#pragma once
#include <cstdint>

struct ReduceMaxFP32TilingData {
  uint32_t rows;           // product of the leading dims
  uint32_t cols;           // length C of the last dim
  uint32_t stride;         // UB row pitch in elements: cols rounded up to 32 B of the I/O dtype
  uint32_t rowsPerBlock;   // every block gets this many rows ...
  uint32_t remainderRows;  // ... and blocks [0, remainderRows) one more
  uint32_t tileRows;       // single pass: rows per UB tile (1 in multi pass)
  uint32_t tileCols;       // multi pass: columns per UB tile (multiple of 64); 0 = single pass
  uint32_t tmpElems;       // fp32 elements of the ReduceMax/ReduceSum work area
};

#ifndef __CCE_AICORE__
#include <algorithm>
#include <stdexcept>

#include "opkit/tiling_util.h"

// UB bytes per tile column, i.e. per element of a tile (FP32 compute assumed: the naive variant,
// which computes in the I/O dtype, needs less): x in double-buffered in the I/O dtype, an FP32 copy of x when the I/O dtype is not FP32, an FP32 NaN probe (x - x).
inline uint64_t ReduceMaxFP32BytesPerCol(uint64_t io) { return 2 * io + (io == 4 ? 0 : 4) + 4; }
// UB bytes per tile row besides the columns: two results per row: values (out queue, I/O dtype, and FP32 staging) and int32 indices (out queue).
inline uint64_t ReduceMaxFP32BytesPerRow(uint64_t io) { return 2 * io + 4 + 2 * 4; }

inline void ReduceMaxFP32Tiling(opkit::TilingContext& ctx, ReduceMaxFP32TilingData& t) {
  const opkit::TensorInfo& x = ctx.inputs.at(0);
  const uint64_t io = x.elem_size();
  const uint64_t cols = x.rank() == 0 ? 1 : static_cast<uint64_t>(x.dim(-1));
  const uint64_t rows = cols == 0 ? 0 : static_cast<uint64_t>(x.numel()) / cols;
  if (rows > UINT32_MAX || cols > UINT32_MAX)
    throw std::invalid_argument("ReduceMaxFP32Tiling: x has more than 2^32 rows or columns");
  t = ReduceMaxFP32TilingData{};
  t.rows = static_cast<uint32_t>(rows);
  t.cols = static_cast<uint32_t>(cols);
  t.stride = static_cast<uint32_t>(opkit::align_up(std::max<uint64_t>(cols, 1), opkit::kBlockBytes / io));

  // Rows across cores, at most one apart (opkit/tiling_util.h).
  const uint64_t maxBlockRows = opkit::SplitRows(ctx, rows, t);

  const uint64_t budget = ctx.platform.ub_usable_bytes;
  const uint64_t perCol = ReduceMaxFP32BytesPerCol(io), perRow = ReduceMaxFP32BytesPerRow(io);
  // Fixed: reduction result (32 B), the work area, a 32 B scalar scratch, alignment slack of the
  // per-row buffers.
  auto bytes = [&](uint64_t tileRows, uint64_t len) {
    return tileRows * len * perCol + tileRows * perRow + 64 + 4 * opkit::align_up(opkit::ReduceTmpElems(len), 8) + 256;
  };
  if (bytes(1, t.stride) <= budget) {
    // DataCopyPad moves at most 4095 rows per call.
    uint64_t r = opkit::LargestFitting(
        std::min<uint64_t>({maxBlockRows, 4095, budget / (t.stride * perCol + perRow)}),
        [&](uint64_t n) { return bytes(n, t.stride) <= budget; });
    t.tileRows = static_cast<uint32_t>(std::max<uint64_t>(r, 1));
    t.tileCols = 0;
    t.tmpElems = static_cast<uint32_t>(opkit::ReduceTmpElems(t.stride));
    return;
  }
  // Multi pass: the largest multiple of 64 columns (256 B of FP32) that fits.
  uint64_t c = budget / perCol / 64 * 64;
  while (c >= 64 && bytes(1, c) > budget) c -= 64;
  if (c < 64) throw std::invalid_argument("ReduceMaxFP32Tiling: UB too small for one 64-column tile");
  t.tileRows = 1;
  t.tileCols = static_cast<uint32_t>(c);
  t.tmpElems = static_cast<uint32_t>(opkit::ReduceTmpElems(c));
}
#endif  // __CCE_AICORE__
