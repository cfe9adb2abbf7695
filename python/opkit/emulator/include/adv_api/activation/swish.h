// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/swish.h): the family is
// lib/activation/swish.h.
#pragma once
#include "lib/activation/swish.h"
