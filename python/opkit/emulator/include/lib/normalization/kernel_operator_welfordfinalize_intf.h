// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/kernel_operator_welfordfinalize_intf.h):
// the family is lib/normalization/welfordfinalize.h.
#pragma once
#include "lib/normalization/welfordfinalize.h"
