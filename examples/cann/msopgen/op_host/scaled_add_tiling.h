// ScaledAdd: z = x + alpha * y. A CANN custom-op project in msOpGen's layout, written for opkit's docs/cann.md:
// the tiling struct is declared with CANN's macros and registered for the op type.
#ifndef SCALED_ADD_TILING_H
#define SCALED_ADD_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ScaledAddTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements
TILING_DATA_FIELD_DEF(uint32_t, blockLength);  // elements per block (the last block may get fewer)
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per UB tile, a multiple of 32 bytes
TILING_DATA_FIELD_DEF(float, alpha);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ScaledAdd, ScaledAddTilingData)
}  // namespace optiling
#endif
