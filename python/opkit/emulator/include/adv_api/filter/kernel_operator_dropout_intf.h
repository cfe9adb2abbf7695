// CANN's lib/filter/kernel_operator_dropout_intf.h (asc-devkit 82b89a15
// include/adv_api/filter/kernel_operator_dropout_intf.h: the deprecated name of dropout.h).
#pragma once
#include "lib/filter/dropout.h"
