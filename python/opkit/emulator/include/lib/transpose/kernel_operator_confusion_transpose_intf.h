// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/transpose/kernel_operator_confusion_transpose_intf.h).
#pragma once
#include "lib/transpose/confusion_transpose.h"
