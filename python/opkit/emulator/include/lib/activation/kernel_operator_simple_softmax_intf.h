// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/kernel_operator_simple_softmax_intf.h): the
// family is lib/activation/simplesoftmax.h.
#pragma once
#include "lib/activation/simplesoftmax.h"
