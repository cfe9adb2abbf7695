// ListScale: y[i] = x[i] * scales[i] + bias over a tensor list (ParamType DYNAMIC) with a list attr (ListFloat).
// Written for opkit's tests (issue 39): the tensor-list and list-attr path of `opkit import-cann`, as the ops-nn
// foreach ops use it, on a project small enough for CI.
#ifndef LIST_SCALE_TILING_H
#define LIST_SCALE_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
constexpr uint32_t LIST_SCALE_MAX = 8;   // tensors per call

BEGIN_TILING_DATA_DEF(ListScaleTilingData)
TILING_DATA_FIELD_DEF(uint32_t, count);                      // tensors in the list = blocks (one tensor per block)
TILING_DATA_FIELD_DEF(uint32_t, tile);                       // elements per UB tile
TILING_DATA_FIELD_DEF(float, bias);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, lengths);             // elements of tensor i
TILING_DATA_FIELD_DEF_ARR(float, 8, scales);                 // the attr scales, one per tensor
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ListScale, ListScaleTilingData)
}  // namespace optiling
#endif
