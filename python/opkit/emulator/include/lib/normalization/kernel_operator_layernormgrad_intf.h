// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/kernel_operator_layernormgrad_intf.h): the family
// is lib/normalization/layernormgrad.h.
#pragma once
#include "lib/normalization/layernormgrad.h"
