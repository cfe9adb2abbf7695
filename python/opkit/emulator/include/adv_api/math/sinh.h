// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/sinh.h): the family is lib/math/sinh.h.
#pragma once
#include "lib/math/sinh.h"
