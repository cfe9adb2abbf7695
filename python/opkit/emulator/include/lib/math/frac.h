// CANN's lib/math/frac.h (asc-devkit 82b89a15 include/adv_api/math/frac.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Frac接口/Frac.md): Frac, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/frac_tiling_impl.cpp:23-36. The engine and what "precision" means here: opkit_emu/adv_math.h.
// Frac.md: x - trunc(x) (the sign of x kept; inf gives NaN as in the formula).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Frac, "GetFracMaxMinTmpSize", (::opkit_emu::AdvTmp{0, 0, 1024}), x - ::opkit_emu::hm::trunc(x))
