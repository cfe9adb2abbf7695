// RmsNormTiling, kernel side: defined with the other advanced tiling structs in opkit/adv_tiling_structs.h
// (namespace AscendC::tiling, CANN's generated kernel_tiling.h layout), which lib/normalization/rmsnorm.h exports
// alone at global scope because CANN's kernel_operator.h reaches it there (adv_api/kernel_api.h ->
// normalization/rmsnorm.h:25 includes kernel_tiling/kernel_tiling.h) and CANN's RmsNorm example declares
// `RmsNormTiling tiling;` with only kernel_operator.h; no kernel of ops-math / ops-nn / ops-transformer defines a
// global struct of that name, so exporting it clashes with none. The other structs stay in the namespace.
#pragma once
#include "opkit/adv_tiling_structs.h"
