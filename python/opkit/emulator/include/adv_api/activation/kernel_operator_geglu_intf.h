// CANN's lib/activation/kernel_operator_geglu_intf.h (asc-devkit 82b89a15
// include/adv_api/activation/kernel_operator_geglu_intf.h: the deprecated name of geglu.h).
#pragma once
#include "lib/activation/geglu.h"
