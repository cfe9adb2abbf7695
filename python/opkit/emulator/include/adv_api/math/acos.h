// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/acos.h): the family is lib/math/acos.h.
#pragma once
#include "lib/math/acos.h"
