// Geometry constants kernels use by name. Facts sheet §4 "Alignment and geometry constants".
#pragma once
#include <cstdint>

#include "opkit_emu/config.h"

namespace AscendC {
constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t B16_DATA_NUM_PER_REPEAT = 128;
constexpr int32_t B32_DATA_NUM_PER_REPEAT = 64;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr int32_t BLOCK_CUBE = 16;
constexpr uint32_t TOTAL_UB_SIZE = opkit::kPlatform.ub_total_bytes;
}  // namespace AscendC
