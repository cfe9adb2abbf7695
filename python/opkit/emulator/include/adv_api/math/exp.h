// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/exp.h): the family is lib/math/exp.h.
#pragma once
#include "lib/math/exp.h"
