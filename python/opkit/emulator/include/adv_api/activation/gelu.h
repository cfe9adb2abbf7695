// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/gelu.h): the family is
// lib/activation/gelu.h.
#pragma once
#include "lib/activation/gelu.h"
