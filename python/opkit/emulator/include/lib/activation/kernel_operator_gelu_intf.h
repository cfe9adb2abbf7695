// CANN's lib/activation/kernel_operator_gelu_intf.h (asc-devkit 82b89a15
// include/adv_api/activation/kernel_operator_gelu_intf.h: the deprecated name of gelu.h).
#pragma once
#include "lib/activation/gelu.h"
