// CANN's lib/math/atanh.h (asc-devkit 82b89a15 include/adv_api/math/atanh.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Atanh接口/Atanh.md): Atanh, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/atanh_tiling.cpp:19-31. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Atanh, "GetAtanhMaxMinTmpSize", (::opkit_emu::AdvTmp{256, 256, 1024}), ::opkit_emu::hm::atanh(x))
