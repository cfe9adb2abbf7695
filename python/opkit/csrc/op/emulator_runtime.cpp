// The emulator's non-template runtime (every OPKIT_EMU_RT function: opkit_emu/config.h), compiled once per
// module flavour with -DOPKIT_EMU_RUNTIME_IMPL and linked into every kernel module of that flavour, whose own
// compile (-DOPKIT_EMU_RUNTIME_EXTERN) sees only the declarations. cmake/opkit_emulator.cmake builds it.
#include "kernel_operator.h"
