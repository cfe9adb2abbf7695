// CANN's kernel_tiling/kernel_tiling.h declares the tiling structs of the advanced API library (out of
// scope here: docs/emulator.md) and is included by kernels for the tiling macros; in the emulator those
// macros come with kernel_operator.h.
#pragma once
#include <cstdint>

#include "kernel_operator.h"
