// CANN's lib/math/erfc.h (asc-devkit 82b89a15 include/adv_api/math/erfc.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Erfc接口/Erfc.md): Erfc, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/erfc_tiling_impl.cpp:23-35. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Erfc, "GetErfcMaxMinTmpSize", (::opkit_emu::AdvTmp{1792, 1792, 4096}), ::opkit_emu::hm::erfc(x))
