// ScaleShift tiling data (ops-math/ops-nn layout): a plain struct shared by op_host and op_kernel.
#ifndef SCALE_SHIFT_TILING_DATA_H
#define SCALE_SHIFT_TILING_DATA_H
#include <cstdint>

struct ScaleShiftTilingData {
    int64_t totalNum = 0;
    int64_t blockFactor = 0;   // elements per block
    int64_t ubFactor = 0;      // elements per UB tile
    float scale = 1.0f;
    float shift = 0.0f;
};
#endif
