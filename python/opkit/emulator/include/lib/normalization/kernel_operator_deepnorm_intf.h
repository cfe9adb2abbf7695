// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/kernel_operator_deepnorm_intf.h): the family
// is lib/normalization/deepnorm.h.
#pragma once
#include "lib/normalization/deepnorm.h"
