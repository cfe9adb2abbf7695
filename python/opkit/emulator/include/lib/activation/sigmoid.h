// CANN's lib/activation/sigmoid.h (asc-devkit 82b89a15 include/adv_api/activation/sigmoid.h:52-120; page
// docs/zh/api/SIMD-API/高阶API/激活函数/Sigmoid.md): Sigmoid(x) = 1 / (1 + exp(-x)), half and float on A2, the four
// forms of the math families (sharedTmpBuffer with and without calCount, framework buffer with and without).
// Minimum sharedTmpBuffer 256 bytes for either type (impl/adv_api/tiling/activation/sigmoid_tiling_impl.cpp:25,47).
// The result is computed in float with the host's expf and rounded to T. Engine: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

OPKIT_EMU_ADV_UNARY(Sigmoid, "GetSigmoidMaxMinTmpSize", (::opkit_emu::AdvTmp{256, 256, 256}),
                    1.0f / (1.0f + ::opkit_emu::hm::exp(-x)))
