// Kernel side of the advanced vector APIs' tiling structs (CANN's generated kernel_tiling/kernel_tiling.h: each
// `#pragma pack(push, 8)` in namespace AscendC::tiling, members zero-initialised, exported at global scope;
// mirror-cann/asc-devkit 82b89a15 impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py). Field lists (names,
// types, order) as the *_tilingdata.h registrations cited on each struct. An op's tiling struct declares one of
// these (TILING_DATA_FIELD_DEF_STRUCT) for an API its A2 kernel may never call (ops-nn layer_norm_v4 declares a
// LayerNormSeparateTiling its arch35 kernel reads): declaring it compiles; the API itself, where the emulator does
// not implement it, is an ordinary compile error naming it. Reached through kernel_tiling/kernel_tiling.h only,
// as the global names would otherwise collide with a kernel's own structs of the same name.
#pragma once
#include "opkit/adv_tiling_structs.h"  // the struct definitions, shared with the host stand-in

using AscendC::tiling::UnPadTiling;
using AscendC::tiling::PadTiling;
using AscendC::tiling::TopkTiling;
using AscendC::tiling::LayerNormTiling;
using AscendC::tiling::LayerNormSeparateTiling;
using AscendC::tiling::LayerNormGradBetaTiling;
using AscendC::tiling::RmsNormTiling;
using AscendC::tiling::BatchNormTiling;
using AscendC::tiling::GroupNormTiling;
using AscendC::tiling::DeepNormTiling;
using AscendC::tiling::LayerNormGradTiling;
using AscendC::tiling::ConfusionTransposeTiling;
