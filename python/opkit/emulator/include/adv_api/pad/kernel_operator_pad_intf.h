// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/pad/kernel_operator_pad_intf.h): the family is lib/pad/pad.h.
#pragma once
#include "lib/pad/pad.h"
