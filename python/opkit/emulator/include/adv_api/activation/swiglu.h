// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/swiglu.h): the family is
// lib/activation/swiglu.h.
#pragma once
#include "lib/activation/swiglu.h"
