// CANN's lib/math/erf.h (asc-devkit 82b89a15 include/adv_api/math/erf.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Erf接口/Erf.md): Erf, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/erf_tiling_impl.cpp:23-35. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Erf, "GetErfMaxMinTmpSize", (::opkit_emu::AdvTmp{768, 768, 2048}), ::opkit_emu::hm::erf(x))
