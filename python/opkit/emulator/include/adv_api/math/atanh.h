// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/atanh.h): the family is lib/math/atanh.h.
#pragma once
#include "lib/math/atanh.h"
