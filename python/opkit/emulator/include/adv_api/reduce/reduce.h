// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/reduce/reduce.h): the family is
// lib/reduce/reduce.h.
#pragma once
#include "lib/reduce/reduce.h"
