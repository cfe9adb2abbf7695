// The kernel-side SoftMaxTiling / LogSoftMaxTiling (CANN's generated kernel_tiling/kernel_tiling.h: a
// `#pragma pack(push, 8)` struct in namespace AscendC::tiling, zero-initialised members; fields from
// opkit/cann_adv_tiling.h). Shared by the kernel side (opkit_emu/adv_tiling.h) and the host stand-in
// (tiling/tiling_api.h): CANN's host tiling functions have an overload filling this struct (asc-devkit 82b89a15
// include/adv_api/activation/softmax_tiling.h:56-58), and a host program declares it (examples/.../softmaxflashv2).
#pragma once
#include <cstdint>

#include "opkit/cann_adv_tiling.h"

namespace AscendC {
namespace tiling {
#define OPKIT_EMU_TILING_FIELD(type, name) type name = 0;
#pragma pack(push, 8)
struct SoftMaxTiling {
  OPKIT_SOFTMAX_TILING_FIELDS(OPKIT_EMU_TILING_FIELD)
};
struct LogSoftMaxTiling {
  OPKIT_SOFTMAX_TILING_FIELDS(OPKIT_EMU_TILING_FIELD)
};
#pragma pack(pop)
#undef OPKIT_EMU_TILING_FIELD
}  // namespace tiling
}  // namespace AscendC
