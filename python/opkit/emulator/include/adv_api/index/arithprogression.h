// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/index/arithprogression.h): lib/index/arithprogression.h.
#pragma once
#include "lib/index/arithprogression.h"
