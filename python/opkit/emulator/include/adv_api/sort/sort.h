// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/sort/sort.h): the family is lib/sort/sort.h.
#pragma once
#include "lib/sort/sort.h"
