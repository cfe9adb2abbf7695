// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/xor.h): the family is lib/math/xor.h.
#pragma once
#include "lib/math/xor.h"
