// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/silu.h): the family is
// lib/activation/silu.h.
#pragma once
#include "lib/activation/silu.h"
