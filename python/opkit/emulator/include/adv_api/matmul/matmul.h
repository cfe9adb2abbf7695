// CANN include path (asc-devkit 82b89a15 include/adv_api/matmul/matmul.h): see lib/matmul_intf.h.
#pragma once
#include "lib/matmul_intf.h"
