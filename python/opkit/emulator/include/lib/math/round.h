// CANN's lib/math/round.h (asc-devkit 82b89a15 include/adv_api/math/round.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Round接口/Round.md): Round, half and float on A2. Minimum sharedTmpBuffer
// (GetXxxMaxMinTmpSize): impl/adv_api/tiling/math/round_tiling_impl.cpp:17-35 (the DAV_2201 branch). The engine and what "precision" means here: opkit_emu/adv_math.h.
// Round.md: to the nearest integer; CANN casts with RoundMode::CAST_RINT (round_v200_impl.h:61), ties to even,
// as torch.round.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

// CANN declares only the two forms with calCount for this family.
OPKIT_EMU_ADV_UNARY_TMP_FORMS(Round, "GetRoundMaxMinTmpSize", (::opkit_emu::AdvTmp{0, 0, 256}), ::opkit_emu::hm::nearbyint(x))
