// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/pad/broadcast.h): the family is lib/pad/broadcast.h.
#pragma once
#include "lib/pad/broadcast.h"
