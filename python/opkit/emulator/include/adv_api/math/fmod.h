// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/math/fmod.h): the family is lib/math/fmod.h.
#pragma once
#include "lib/math/fmod.h"
