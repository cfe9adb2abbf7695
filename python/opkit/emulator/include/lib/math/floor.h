// CANN's lib/math/floor.h (asc-devkit 82b89a15 include/adv_api/math/floor.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Floor接口/Floor.md): Floor, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/floor_tiling_impl.cpp:22-32. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

// CANN declares only the two forms with calCount for this family.
OPKIT_EMU_ADV_UNARY_TMP_FORMS(Floor, "GetFloorMaxMinTmpSize", (::opkit_emu::AdvTmp{0, 0, 512}), ::opkit_emu::hm::floor(x))
