// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/quantization/ascend_antiquant_utils.h): the family is
// lib/quantization/ascend_antiquant.h.
#pragma once
#include "lib/quantization/ascend_antiquant.h"
