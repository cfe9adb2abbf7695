// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/clamp.h): the family is lib/math/clamp.h.
#pragma once
#include "lib/math/clamp.h"
