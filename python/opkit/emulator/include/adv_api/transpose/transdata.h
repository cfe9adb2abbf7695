// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/transpose/transdata.h): lib/transpose/transdata.h.
#pragma once
#include "lib/transpose/transdata.h"
