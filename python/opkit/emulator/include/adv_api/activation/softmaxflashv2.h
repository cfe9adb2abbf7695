// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/softmaxflashv2.h): the family is
// lib/activation/softmaxflashv2.h.
#pragma once
#include "lib/activation/softmaxflashv2.h"
