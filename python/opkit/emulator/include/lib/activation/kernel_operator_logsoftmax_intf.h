// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/kernel_operator_logsoftmax_intf.h): the
// family is lib/activation/logsoftmax.h.
#pragma once
#include "lib/activation/logsoftmax.h"
