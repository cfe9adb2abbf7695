// CANN kernel header path (asc-devkit 82b89a15 include/adv_api/normalization/layernormgradbeta.h): the family is
// lib/normalization/layernormgradbeta.h.
#pragma once
#include "lib/normalization/layernormgradbeta.h"
