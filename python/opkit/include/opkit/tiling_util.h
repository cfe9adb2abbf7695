// The tiling toolkit: host-side helpers every opkit tiling function shares (kernel side:
// opkit/kernel_util.h). Plain C++17 like opkit/tiling.h.
#pragma once
#include <algorithm>
#include <cstdint>

#include "opkit/tiling.h"

namespace opkit {

// Rows across cores: at most one row apart, the first blocks take the remainder (the kernel finds its
// share with RowsOfBlock). Sets ctx.block_dim; returns the most rows one block gets.
template <class Tiling>
inline uint64_t SplitRows(TilingContext& ctx, uint64_t rows, Tiling& t) {
  const uint64_t blocks = std::max<uint64_t>(1, std::min<uint64_t>(ctx.platform.vector_cores, rows));
  ctx.block_dim = static_cast<uint32_t>(blocks);
  t.rowsPerBlock = static_cast<uint32_t>(rows / blocks);
  t.remainderRows = static_cast<uint32_t>(rows % blocks);
  return std::max<uint64_t>(1, ceil_div(rows, blocks));
}

// The UB-fit loop: the largest n in [1, hi] with fits(n), for a fits() that only gets harder as n grows;
// 1 when nothing larger fits (the caller checks whether 1 does).
template <class Fits>
inline uint64_t LargestFitting(uint64_t hi, Fits fits) {
  uint64_t n = std::max<uint64_t>(hi, 1);
  while (n > 1 && !fits(n)) --n;
  return n;
}

// Work area of ReduceMax/ReduceMin with index (asc-devkit docs, ReduceMax.md, "sharedTmpBuffer"), in
// FP32 elements: round 1 writes 2 values per 256 B repeat, each later round 2 per repeat of the previous
// round, each round 32 B aligned. ReduceSum needs less.
inline uint64_t ReduceTmpElems(uint64_t len) {
  uint64_t total = 0, produced = 2 * ceil_div(std::max<uint64_t>(len, 1), 64);
  for (;;) {
    total += align_up(produced, 8);
    if (produced <= 2) break;
    produced = 2 * ceil_div(produced, 64);
  }
  return total + 8;
}

}  // namespace opkit
