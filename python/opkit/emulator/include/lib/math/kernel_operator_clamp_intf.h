// CANN's lib/math/kernel_operator_clamp_intf.h (asc-devkit 82b89a15 include/adv_api/math/kernel_operator_clamp_intf.h:
// the deprecated name of clamp.h).
#pragma once
#include "lib/math/clamp.h"
