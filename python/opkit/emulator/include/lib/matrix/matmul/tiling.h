// CANN's installed copy of include/adv_api/matmul/tiling.h (ops-transformer attention/nsa_selected_attention_infer's
// vector kernel includes it by this name): the same header here, so one stand-in says what it does.
#pragma once
#include "adv_api/matmul/tiling.h"
