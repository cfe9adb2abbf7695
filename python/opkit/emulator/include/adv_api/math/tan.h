// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/tan.h): the family is lib/math/tan.h.
#pragma once
#include "lib/math/tan.h"
