// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/softmaxflash.h): the family is
// lib/activation/softmaxflash.h.
#pragma once
#include "lib/activation/softmaxflash.h"
