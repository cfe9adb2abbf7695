// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/log.h): the family is lib/math/log.h.
#pragma once
#include "lib/math/log.h"
