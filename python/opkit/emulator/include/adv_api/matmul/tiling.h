// CANN include path (asc-devkit 82b89a15 include/adv_api/matmul/tiling.h, installed also as
// lib/matrix/matmul/tiling.h, which ops-transformer attention/nsa_selected_attention_infer's vector kernel includes):
// the Matmul configurations (GetNormalConfig, GetMDLConfig, MatmulConfig, ...), cube-side, rejected by name where
// used (lib/matmul_intf.h); including the header never stops a build.
#pragma once
#include "lib/matmul_intf.h"
