// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/cumsum.h): the family is lib/math/cumsum.h.
#pragma once
#include "lib/math/cumsum.h"
