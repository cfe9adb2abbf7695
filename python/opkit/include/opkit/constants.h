// Constants an op's kernel (device) and its tiling function (host) must agree on: one definition
// both sides include. No includes and no std types, so device compilers take it too.
#pragma once

namespace opkit {

inline constexpr unsigned kBlockBytes = 32;    // UB DataBlock: alignment of UB operands and DataCopy units
inline constexpr unsigned kRepeatBytes = 256;  // one vector repeat (8 blocks)
// Flat (elementwise) ops split the tensor across cores in units of this many elements, so every core's
// range starts 32-byte aligned in any I/O dtype.
inline constexpr unsigned long long kSplitUnit = 256;

}  // namespace opkit
