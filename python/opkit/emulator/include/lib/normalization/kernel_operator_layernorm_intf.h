// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/kernel_operator_layernorm_intf.h): the family
// is lib/normalization/layernorm.h.
#pragma once
#include "lib/normalization/layernorm.h"
