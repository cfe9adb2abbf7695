// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/groupnorm.h): the family is
// lib/normalization/groupnorm.h.
#pragma once
#include "lib/normalization/groupnorm.h"
