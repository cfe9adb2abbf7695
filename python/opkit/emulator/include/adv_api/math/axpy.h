// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/axpy.h): the family is lib/math/axpy.h.
#pragma once
#include "lib/math/axpy.h"
