// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/erfc.h): the family is lib/math/erfc.h.
#pragma once
#include "lib/math/erfc.h"
