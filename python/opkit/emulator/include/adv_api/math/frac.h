// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/frac.h): the family is lib/math/frac.h.
#pragma once
#include "lib/math/frac.h"
