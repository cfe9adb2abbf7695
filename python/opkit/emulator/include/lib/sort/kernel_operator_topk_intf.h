// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/sort/kernel_operator_topk_intf.h): lib/sort/topk.h.
#pragma once
#include "lib/sort/topk.h"
