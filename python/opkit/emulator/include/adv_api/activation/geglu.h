// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/geglu.h): the family is
// lib/activation/geglu.h.
#pragma once
#include "lib/activation/geglu.h"
