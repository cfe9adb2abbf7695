// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/sin.h): the family is lib/math/sin.h.
#pragma once
#include "lib/math/sin.h"
