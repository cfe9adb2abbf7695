// A kernel module of the emulator target: the user's kernel.cpp for one I/O dtype and variant, exporting
// opkit_kernel_launch (opkit/launch_abi.h). One source for every op: cmake/opkit_emulator.cmake compiles it
// with the op folder first on the include path and
//   OPKIT_KERNEL_ENTRY=<snake>  OPKIT_KERNEL_GM_ARGS=<inputs + outputs + 2>  DTYPE_<NAME>=<C++ type>...
// (and OPKIT_NAIVE_COMPUTE for the naive variant), so no file is generated per op.
#include "kernel_operator.h"
#include "kernel.cpp"

OPKIT_EMU_DEFINE_MODULE(OPKIT_KERNEL_ENTRY, OPKIT_KERNEL_GM_ARGS)
