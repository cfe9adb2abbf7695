// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/asinh.h): the family is lib/math/asinh.h.
#pragma once
#include "lib/math/asinh.h"
