// CANN's include/utils/debug/asc_printf.h (asc-devkit 82b89a15): `printf` inside a kernel. On the emulator a kernel
// is host code, so printf is the C library's (and AscendC::printf, opkit_emu/debug.h); this path only has to resolve
// (CANN's examples/01_simd_cpp_api/00_introduction/00_quickstart/hello_world includes it).
#pragma once
#include <cstdio>

#include "kernel_operator.h"
