// CANN's lib/activation/kernel_operator_swish_intf.h (asc-devkit 82b89a15
// include/adv_api/activation/kernel_operator_swish_intf.h: the deprecated name of swish.h).
#pragma once
#include "lib/activation/swish.h"
