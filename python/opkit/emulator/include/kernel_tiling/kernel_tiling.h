// CANN's kernel_tiling/kernel_tiling.h: the tiling structs of the advanced API library (opkit_emu/adv_tiling.h:
// SoftMaxTiling, LogSoftMaxTiling implemented; opkit_emu/adv_tiling_rejected.h: the rest rejected by name) and, through kernel_operator.h, the
// tiling macros.
#pragma once
#include <cstdint>

#include "kernel_operator.h"
#include "opkit_emu/adv_tiling_rejected.h"
