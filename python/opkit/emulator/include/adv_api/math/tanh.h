// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/tanh.h): the family is lib/math/tanh.h.
#pragma once
#include "lib/math/tanh.h"
