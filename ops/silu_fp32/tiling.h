// Rendered by opkit from templates/families/elementwise/tiling.h.j2 for SiluFP32 (activation=silu, backward=false).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// Tiling for silu_fp32: a flat element range split over the vector cores, each core's range walked
// in UB tiles. The host part is hidden from device compilers (docs/architecture.md, "Tiling ABI").
#pragma once
#ifndef __CCE_AICORE__
#include <cstdint>
#endif

struct SiluFP32TilingData {
  uint64_t total;    // elements of x (any shape, flattened)
  uint32_t tileLen;  // elements per UB tile, a multiple of 64 (one fp32 repeat)
  uint32_t reserved;
};

#ifndef __CCE_AICORE__
#include <algorithm>

#include "opkit/tiling_util.h"

// UB bytes per tile element: input and output queues double-buffered in the I/O dtype, plus two
// fp32 work buffers.
inline uint64_t SiluFP32BytesPerElem(size_t io_bytes) { return 2 * 2 * io_bytes + 2 * 4; }

inline void SiluFP32Tiling(opkit::TilingContext& ctx, SiluFP32TilingData& t) {
  const opkit::TensorInfo& x = ctx.inputs.at(0);
  t.total = static_cast<uint64_t>(x.numel());
  t.reserved = 0;
  const uint64_t units = opkit::ceil_div(t.total, opkit::kSplitUnit);
  ctx.block_dim = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(units, ctx.platform.vector_cores)));
  const uint64_t fit = ctx.platform.ub_usable_bytes / SiluFP32BytesPerElem(x.elem_size()) / 64 * 64;
  const uint64_t share = opkit::align_up(opkit::ceil_div(units, ctx.block_dim) * opkit::kSplitUnit, 64);
  t.tileLen = static_cast<uint32_t>(std::max<uint64_t>(64, std::min(fit, share)));
}
#endif
