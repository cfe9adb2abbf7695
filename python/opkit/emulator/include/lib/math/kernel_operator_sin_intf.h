// CANN's lib/math/kernel_operator_sin_intf.h (asc-devkit 82b89a15 include/adv_api/math/kernel_operator_sin_intf.h): the
// family's header under its older name, which CANN keeps (deprecated) and ops-nn's kernels still include.
#pragma once
#include "lib/math/sin.h"
