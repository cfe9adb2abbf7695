// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/rmsnorm.h): the family is
// lib/normalization/rmsnorm.h.
#pragma once
#include "lib/normalization/rmsnorm.h"
