// CANN include path (asc-devkit 82b89a15 include/adv_api/select/selectwithbytesmask.h): lib/select/selectwithbytesmask.h.
#pragma once
#include "lib/select/selectwithbytesmask.h"
