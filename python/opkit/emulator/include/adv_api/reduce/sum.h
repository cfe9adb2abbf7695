// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/reduce/sum.h): the family is lib/reduce/sum.h.
#pragma once
#include "lib/reduce/sum.h"
