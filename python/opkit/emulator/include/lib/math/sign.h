// CANN's lib/math/sign.h (asc-devkit 82b89a15 include/adv_api/math/sign.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Sign接口/Sign.md): Sign, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/sign_tiling.cpp:20-44. The engine and what "precision" means here: opkit_emu/adv_math.h.
// Sign.md's example: -inf, -2 -> -1; -0, 0, NaN, -NaN -> 0; 2, inf -> 1 (NaN gives 0, not NaN as torch.sign).
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Sign, "GetSignMaxMinTmpSize", (::opkit_emu::AdvTmp{768, 768, 768}), x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f))
