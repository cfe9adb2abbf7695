// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/floor.h): the family is lib/math/floor.h.
#pragma once
#include "lib/math/floor.h"
