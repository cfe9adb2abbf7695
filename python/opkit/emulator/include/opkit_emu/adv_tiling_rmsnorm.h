// RmsNormTiling, kernel side (CANN's generated kernel_tiling.h layout: namespace AscendC::tiling, pack 8, members
// zero-initialised). Apart from the other advanced tiling structs because CANN's kernel_operator.h reaches it at
// global scope (adv_api/kernel_api.h -> normalization/rmsnorm.h:25 includes kernel_tiling/kernel_tiling.h) and CANN's
// RmsNorm example declares `RmsNormTiling tiling;` with only kernel_operator.h; no kernel of ops-math / ops-nn /
// ops-transformer defines a global struct of that name, so exporting it clashes with none.
#pragma once
#include <cstdint>

namespace AscendC {
namespace tiling {
#pragma pack(push, 8)
// asc-devkit 82b89a15 include/adv_api/normalization/rmsnorm_tilingdata.h:16-29
struct RmsNormTiling {
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  float reciprocalOfHLength = 0;
  uint32_t mainBshLength = 0;
  uint32_t mainBsLength = 0;
  uint32_t mainBsLengthAlign = 0;
  uint32_t loopRound = 0;
  uint32_t inputTailPos = 0;
  uint32_t tailBshLength = 0;
  uint32_t tailBsLength = 0;
};
#pragma pack(pop)
}  // namespace tiling
}  // namespace AscendC
