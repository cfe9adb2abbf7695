// CANN's lib/math/sinh.h (asc-devkit 82b89a15 include/adv_api/math/sinh.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Sinh接口/Sinh.md): Sinh, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/sinh_tiling_impl.cpp:23-36. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Sinh, "GetSinhMaxMinTmpSize", (::opkit_emu::AdvTmp{256, 256, 1024}), ::opkit_emu::hm::sinh(x))
