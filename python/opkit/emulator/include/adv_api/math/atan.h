// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/atan.h): the family is lib/math/atan.h.
#pragma once
#include "lib/math/atan.h"
