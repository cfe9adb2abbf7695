// CANN's adv_api/activation/kernel_operator_sigmoid_intf.h (asc-devkit 82b89a15
// include/adv_api/activation/kernel_operator_sigmoid_intf.h: the deprecated name of sigmoid.h).
#pragma once
#include "lib/activation/sigmoid.h"
