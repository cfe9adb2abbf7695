// Geometry constants kernels use by name. Facts sheet §4 "Alignment and geometry constants".
#pragma once
#include <cstdint>

#include "opkit_emu/config.h"

namespace AscendC {
constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
// CANN: impl/basic_api/utils/kernel_utils_constants.h:32 (the default block stride of a level-0 call)
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
// CANN: impl/basic_api/utils/kernel_utils_constants.h:53-55, namespace AscendC, every chip: the float bit patterns
// of +inf, -inf and NaN (ops-transformer moe_gating_top_k reads F32_NEG_INF through a float pointer).
constexpr uint32_t F32_INF = 0x7f800000;
constexpr uint32_t F32_NEG_INF = 0xff800000;
constexpr uint32_t F32_NAN = 0x7fc00000;
constexpr int32_t B16_DATA_NUM_PER_REPEAT = 128;
constexpr int32_t B32_DATA_NUM_PER_REPEAT = 64;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr int32_t BLOCK_CUBE = 16;
constexpr uint32_t TOTAL_UB_SIZE = opkit::kPlatform.ub_total_bytes;
// More of CANN's named geometry constants (same names, types and values as asc-devkit 82b89a15
// impl/basic_api/utils/kernel_utils_constants.h:225-318, namespace AscendC): ops-nn kernels use them unqualified.
constexpr uint8_t DEFAULT_DATA_COPY_NBURST = 1;
constexpr uint8_t DEFAULT_DATA_COPY_STRIDE = 0;
constexpr uint16_t TWO_BLK_SIZE = 64;
constexpr int32_t FULL_MASK_LEN = 128;
constexpr int32_t HALF_MASK_LEN = 64;
constexpr uint8_t B64_BYTE_SIZE = 8;
constexpr uint8_t B32_BYTE_SIZE = 4;
constexpr uint8_t B16_BYTE_SIZE = 2;
constexpr uint8_t B8_BYTE_SIZE = 1;
constexpr uint8_t B32_DATA_NUM_PER_BLOCK = 8;
constexpr uint8_t B16_DATA_NUM_PER_BLOCK = 16;
constexpr uint32_t B64_DATA_NUM_PER_REPEAT = 32;
constexpr uint32_t HALF_REPEAT_SIZE = ONE_REPEAT_BYTE_SIZE / B16_BYTE_SIZE;
constexpr uint32_t FLOAT_REPEAT_SIZE = ONE_REPEAT_BYTE_SIZE / B32_BYTE_SIZE;
constexpr uint32_t ONE_REPEAT_FLOAT_SIZE = ONE_REPEAT_BYTE_SIZE / B32_BYTE_SIZE;
constexpr uint32_t ONE_REPEAT_HALF_SIZE = ONE_REPEAT_BYTE_SIZE / B16_BYTE_SIZE;
constexpr uint32_t MAX_REPEAT_FLOAT_SIZE = ONE_REPEAT_FLOAT_SIZE * MAX_REPEAT_TIMES;
constexpr uint32_t MAX_REPEAT_HALF_SIZE = ONE_REPEAT_HALF_SIZE * MAX_REPEAT_TIMES;
constexpr uint32_t ONE_BLK_HALF_NUM = ONE_BLK_SIZE / B16_BYTE_SIZE;
constexpr uint32_t ONE_BLK_FLOAT_NUM = ONE_BLK_SIZE / B32_BYTE_SIZE;
constexpr uint32_t BRCB_BROADCAST_NUMBER = 8;
constexpr uint32_t BRCB_MAX_REPEAT_SIZE = BRCB_BROADCAST_NUMBER * MAX_REPEAT_TIMES;
constexpr int32_t MIN_BLOCK_LEN = 1;
}  // namespace AscendC
