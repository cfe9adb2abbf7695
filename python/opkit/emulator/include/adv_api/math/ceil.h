// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/ceil.h): the family is lib/math/ceil.h.
#pragma once
#include "lib/math/ceil.h"
