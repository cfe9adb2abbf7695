// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/kernel_operator_softmax_flash_intf.h): the
// family is lib/activation/softmaxflash.h.
#pragma once
#include "lib/activation/softmaxflash.h"
