// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/quantization/kernel_operator_ascend_dequant_intf.h): the family is
// lib/quantization/ascend_dequant.h.
#pragma once
#include "lib/quantization/ascend_dequant.h"
