// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/acosh.h): the family is lib/math/acosh.h.
#pragma once
#include "lib/math/acosh.h"
