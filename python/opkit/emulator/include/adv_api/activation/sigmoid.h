// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/sigmoid.h): the family is
// lib/activation/sigmoid.h.
#pragma once
#include "lib/activation/sigmoid.h"
