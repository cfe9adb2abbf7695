// Kernel side of CANN's tiling/tiling_api.h, which an op_host tiling header includes (the kernel's translation
// unit includes that header too, docs/cann.md): the advanced-API tiling structs, as the generated
// kernel_tiling.h declares them for the kernel (opkit_emu/adv_tiling.h). The host-side functions
// (SoftMaxTilingFunc, ...) live in opkit's host stand-in, python/opkit/cannproject/include/tiling/tiling_api.h.
#pragma once
#include "kernel_tiling/kernel_tiling.h"
