// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/trunc.h): the family is lib/math/trunc.h.
#pragma once
#include "lib/math/trunc.h"
