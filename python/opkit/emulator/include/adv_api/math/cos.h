// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/cos.h): the family is lib/math/cos.h.
#pragma once
#include "lib/math/cos.h"
