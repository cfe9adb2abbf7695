// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/activation/simplesoftmax.h): the family is
// lib/activation/simplesoftmax.h.
#pragma once
#include "lib/activation/simplesoftmax.h"
