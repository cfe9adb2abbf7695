// Rendered by opkit from templates/families/elementwise/backward/tiling.h.j2 for GeluFP32Backward (activation=gelu, backward=true).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// Tiling for gelu_fp32_backward: a flat element range split over the vector cores, each core's range walked
// in UB tiles. The host part is hidden from device compilers (docs/architecture.md, "Tiling ABI").
#pragma once
#ifndef __CCE_AICORE__
#include <cstdint>
#endif

struct GeluFP32BackwardTilingData {
  uint64_t total;        // elements of x and dy (any shape, flattened)
  uint32_t tileLen;      // elements per UB tile, a multiple of 64 (one fp32 repeat)
  uint32_t approximate;  // 0: erf form ("none"), 1: tanh form
};

#ifndef __CCE_AICORE__
#include <algorithm>
#include <stdexcept>
#include <string>

#include "opkit/tiling_util.h"

// UB bytes per tile element: x and dy in and dx out, double-buffered in the I/O dtype, plus six fp32
// work buffers (x, dy, three temporaries, the constant numerator used by Div).
inline uint64_t GeluFP32BackwardBytesPerElem(size_t io_bytes) { return 3 * 2 * io_bytes + 6 * 4; }

inline void GeluFP32BackwardTiling(opkit::TilingContext& ctx, GeluFP32BackwardTilingData& t) {
  const opkit::TensorInfo& x = ctx.inputs.at(0);
  const std::string& mode = ctx.attr_str("approximate");
  if (mode == "none") {
    t.approximate = 0;
  } else if (mode == "tanh") {
    t.approximate = 1;
  } else {
    throw std::invalid_argument("gelu_fp32_backward: attr 'approximate' must be \"none\" or \"tanh\", got \"" + mode + "\"");
  }
  t.total = static_cast<uint64_t>(x.numel());
  const uint64_t units = opkit::ceil_div(t.total, opkit::kSplitUnit);
  ctx.block_dim = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(units, ctx.platform.vector_cores)));
  // Largest tile that fits UB, but no larger than one core's share (small tensors use less UB).
  const uint64_t fit = ctx.platform.ub_usable_bytes / GeluFP32BackwardBytesPerElem(x.elem_size()) / 64 * 64;
  const uint64_t share = opkit::align_up(opkit::ceil_div(units, ctx.block_dim) * opkit::kSplitUnit, 64);
  t.tileLen = static_cast<uint32_t>(std::max<uint64_t>(64, std::min(fit, share)));
}
#endif
