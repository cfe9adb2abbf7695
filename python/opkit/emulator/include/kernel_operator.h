// opkit's AscendC CPU emulator: the kernel-side API (a faithful subset of CANN's kernel_operator.h).
// Which APIs exist, and the rules they enforce: docs/emulator.md.
#pragma once
#include <cstddef>
#include <cstdint>

#include "opkit_emu/config.h"
#include "opkit_emu/types.h"
#include "opkit_emu/compat.h"
#include "opkit_emu/runtime.h"
#include "opkit_emu/tensor.h"
#include "opkit_emu/pipe.h"
#include "opkit_emu/datacopy.h"
#include "opkit_emu/vector.h"
#include "opkit_emu/cast.h"
#include "opkit_emu/reduce.h"
#include "opkit_emu/cmpsel.h"
#include "opkit_emu/sync.h"
#include "opkit_emu/compat_sync.h"
#include "opkit_emu/level0.h"
#include "opkit_emu/reduce_ext.h"
#include "opkit_emu/bitwise.h"
#include "opkit_emu/select.h"
#include "opkit_emu/gather.h"
#include "opkit_emu/constants.h"
#include "opkit_emu/launch.h"
