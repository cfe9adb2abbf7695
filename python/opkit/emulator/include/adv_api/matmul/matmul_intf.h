// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/matmul/matmul_intf.h): see lib/matmul_intf.h.
#pragma once
#include "lib/matmul_intf.h"
