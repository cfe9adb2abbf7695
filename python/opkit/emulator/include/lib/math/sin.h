// CANN's lib/math/sin.h (asc-devkit 82b89a15 include/adv_api/math/sin.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Sin接口/Sin.md): Sin, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/sin_tiling_impl.cpp:24-27,58-71. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Sin, "GetSinMaxMinTmpSize", (::opkit_emu::AdvTmp{768, 512, 2048}), ::opkit_emu::hm::sin(x))
