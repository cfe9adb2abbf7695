// Kernel side of the advanced-API tiling structs (what CANN's generated kernel_tiling/kernel_tiling.h holds:
// mirror-cann/asc-devkit impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py writes each tilingdata.h as
// a `#pragma pack(push, 8)` struct in namespace AscendC::tiling with zero-initialised members, and exports the
// legacy ones -- SoftMaxTiling, TCubeTiling, LayerNormTiling, ... -- at global scope with a using-declaration).
// Implemented: SoftMaxTiling, LogSoftMaxTiling (field list shared with the host stand-in,
// opkit/cann_adv_tiling.h); kernel_operator.h includes this header for SoftMax. The cube unit's structs and the
// advanced vector APIs not written yet are in opkit_emu/adv_tiling_rejected.h, which only kernel_tiling.h and
// tiling/tiling_api.h include (their global names -- PadTiling, TopkTiling, ... -- would otherwise collide with a
// kernel's own structs of the same name).
#pragma once
#include <cstdint>

#include "opkit/adv_tiling_softmax.h"
#include "opkit/cann_adv_tiling.h"


#define OPKIT_EMU_EXPORT_TILING(NAME) using AscendC::tiling::NAME;
OPKIT_EMU_EXPORT_TILING(SoftMaxTiling)
OPKIT_EMU_EXPORT_TILING(LogSoftMaxTiling)
#undef OPKIT_EMU_EXPORT_TILING
