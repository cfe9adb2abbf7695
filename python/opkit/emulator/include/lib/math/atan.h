// CANN's lib/math/atan.h (asc-devkit 82b89a15 include/adv_api/math/atan.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Atan接口/Atan.md): Atan, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/atan_tiling_impl.cpp:22-34. The engine and what "precision" means here: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Atan, "GetAtanMaxMinTmpSize", (::opkit_emu::AdvTmp{1280, 1280, 3072}), ::opkit_emu::hm::atan(x))
