// register/op_impl_registry.h as a kernel compile finds it: CANN's kernel build puts the toolkit's include folder
// on the path (mirror-cann/asc-devkit 82b89a15 tools/build/asc_op_compile_base/adapter/compile_op.py:1356,
// `-I <asc>/../../include`), where this host header (hicann/metadef, IMPL_OP / IMPL_OP_OPTILING registration)
// lives, so a kernel-side tiling header that includes it (ops-math c4193324 experimental/math/real/op_kernel/
// real_tiling.h:19) compiles. The kernel uses none of its names; here it declares none: a kernel that does name
// one (IMPL_OP_OPTILING, OpImplRegisterV2, ...) stops at an ordinary compile error naming it. The tiling-data
// macros a host header reaches through it are register/tilingdata_base.h's.
#pragma once
#include "register/tilingdata_base.h"
