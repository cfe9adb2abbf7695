// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/sign.h): the family is lib/math/sign.h.
#pragma once
#include "lib/math/sign.h"
