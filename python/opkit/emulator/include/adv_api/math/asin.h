// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/asin.h): the family is lib/math/asin.h.
#pragma once
#include "lib/math/asin.h"
