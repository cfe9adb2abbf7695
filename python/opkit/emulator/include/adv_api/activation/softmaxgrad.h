// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/softmaxgrad.h): the family is
// lib/activation/softmaxgrad.h.
#pragma once
#include "lib/activation/softmaxgrad.h"
