// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/filter/dropout.h): the family is lib/filter/dropout.h.
#pragma once
#include "lib/filter/dropout.h"
