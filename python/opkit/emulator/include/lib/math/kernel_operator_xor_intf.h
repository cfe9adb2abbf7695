// CANN's lib/math/kernel_operator_xor_intf.h (asc-devkit 82b89a15 include/adv_api/math/kernel_operator_xor_intf.h:
// the deprecated name of xor.h).
#pragma once
#include "lib/math/xor.h"
