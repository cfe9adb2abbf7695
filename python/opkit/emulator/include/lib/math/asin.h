// CANN's lib/math/asin.h (asc-devkit 82b89a15 include/adv_api/math/asin.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Asin接口/Asin.md): Asin, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/asin_tiling_impl.cpp:23-35. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Asin, "GetAsinMaxMinTmpSize", (::opkit_emu::AdvTmp{512, 512, 1536}), ::opkit_emu::hm::asin(x))
