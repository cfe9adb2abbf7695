// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/kernel_operator_batchnorm_intf.h): the
// family is lib/normalization/batchnorm.h.
#pragma once
#include "lib/normalization/batchnorm.h"
