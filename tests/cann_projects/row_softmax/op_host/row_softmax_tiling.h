// RowSoftmax: y = softmax(x) over the last axis, plus each row's max and sum. A CANN custom-op project written
// here (msOpGen layout) to test opkit's tiling/tiling_api.h: the SoftMax tiling struct nested in the op's own.
#ifndef ROW_SOFTMAX_TILING_H
#define ROW_SOFTMAX_TILING_H
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(RowSoftmaxTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);        // rows of the whole input
TILING_DATA_FIELD_DEF(uint32_t, cols);        // valid columns
TILING_DATA_FIELD_DEF(uint32_t, colsAligned); // columns padded to 32 bytes
TILING_DATA_FIELD_DEF(uint32_t, rowsPerBlock);
TILING_DATA_FIELD_DEF(uint32_t, workBytes);   // SoftMax's work buffer
TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmax);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(RowSoftmax, RowSoftmaxTilingData)
}  // namespace optiling
#endif
