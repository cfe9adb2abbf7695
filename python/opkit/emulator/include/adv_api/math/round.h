// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/round.h): the family is lib/math/round.h.
#pragma once
#include "lib/math/round.h"
