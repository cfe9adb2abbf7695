// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/softmaxflashv3.h): the family is
// lib/activation/softmaxflashv3.h.
#pragma once
#include "lib/activation/softmaxflashv3.h"
