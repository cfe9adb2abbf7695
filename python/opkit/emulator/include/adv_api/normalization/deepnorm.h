// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/deepnorm.h): the family is
// lib/normalization/deepnorm.h.
#pragma once
#include "lib/normalization/deepnorm.h"
