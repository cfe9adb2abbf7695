// CANN kernel header path (asc-devkit 82b89a15 kernel_operator_intf.h): on the emulator the whole kernel API is kernel_operator.h,
// as CANN's own kernel_operator.h includes the basic and advanced API (include/basic_api/kernel_operator_intf.h:64).
#pragma once
#include "kernel_operator.h"
