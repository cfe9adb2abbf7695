// CANN's lib/math/cumsum_utils.h (asc-devkit 82b89a15 include/adv_api/math/cumsum_utils.h:27-39): CumSumConfig and
// CumSumInfo, declared with the API in lib/math/cumsum.h.
#pragma once
#include "lib/math/cumsum.h"
