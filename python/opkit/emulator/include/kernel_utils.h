// CANN kernel header path: asc-devkit 82b89a15 impl/basic_api/kernel_utils.h, installed in the folder CANN's kernel
// build puts on the include path (ops-nn scripts/util/ascendc_impl_build.py:182, tikcfw/impl), so ops-nn
// quant/group_quant's `#include "kernel_utils.h"` reaches it. Its names are part of kernel_operator.h here.
#pragma once
#include "kernel_operator.h"
