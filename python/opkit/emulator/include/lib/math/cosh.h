// CANN's lib/math/cosh.h (asc-devkit 82b89a15 include/adv_api/math/cosh.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Cosh接口/Cosh.md): Cosh, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/cosh_tiling_impl.cpp:22-34. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Cosh, "GetCoshMaxMinTmpSize", (::opkit_emu::AdvTmp{512, 512, 1536}), ::opkit_emu::hm::cosh(x))
