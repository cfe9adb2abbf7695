// CANN's lib/math/tan.h (asc-devkit 82b89a15 include/adv_api/math/tan.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Tan接口/Tan.md): Tan, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/tan_tiling_impl.cpp:23-36. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Tan, "GetTanMaxMinTmpSize", (::opkit_emu::AdvTmp{1024, 1024, 2560}), ::opkit_emu::hm::tan(x))
