// CANN's lib/activation/kernel_operator_swiglu_intf.h (asc-devkit 82b89a15
// include/adv_api/activation/kernel_operator_swiglu_intf.h: the deprecated name of swiglu.h).
#pragma once
#include "lib/activation/swiglu.h"
