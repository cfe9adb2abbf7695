// CANN's lib/activation/kernel_operator_silu_intf.h (asc-devkit 82b89a15
// include/adv_api/activation/kernel_operator_silu_intf.h: the deprecated name of silu.h).
#pragma once
#include "lib/activation/silu.h"
