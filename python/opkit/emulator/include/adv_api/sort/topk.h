// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/sort/topk.h): the family is lib/sort/topk.h.
#pragma once
#include "lib/sort/topk.h"
