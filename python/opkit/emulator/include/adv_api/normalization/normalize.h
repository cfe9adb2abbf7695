// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/normalize.h): the family is
// lib/normalization/normalize.h.
#pragma once
#include "lib/normalization/normalize.h"
