// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/erf.h): the family is lib/math/erf.h.
#pragma once
#include "lib/math/erf.h"
