// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/cosh.h): the family is lib/math/cosh.h.
#pragma once
#include "lib/math/cosh.h"
