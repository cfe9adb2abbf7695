// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/transpose/confusion_transpose.h): the family is
// lib/transpose/confusion_transpose.h.
#pragma once
#include "lib/transpose/confusion_transpose.h"
