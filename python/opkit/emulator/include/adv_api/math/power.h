// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/power.h): the family is lib/math/power.h.
#pragma once
#include "lib/math/power.h"
