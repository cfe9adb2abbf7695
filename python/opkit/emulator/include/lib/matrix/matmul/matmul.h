// CANN include path (asc-devkit 82b89a15 include/adv_api/matmul/matmul.h, installed as lib/matrix/matmul/matmul.h,
// which ops-math math/rfft1_d and math/stft include): the Matmul API, rejected by name where used (lib/matmul_intf.h).
#pragma once
#include "lib/matmul_intf.h"
