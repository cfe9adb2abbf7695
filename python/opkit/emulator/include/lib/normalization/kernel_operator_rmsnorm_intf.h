// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/kernel_operator_rmsnorm_intf.h): the family is
// lib/normalization/rmsnorm.h.
#pragma once
#include "lib/normalization/rmsnorm.h"
