// ScaleShift kernel entry (ops-math layout): a template over the arguments the tiling key encodes.
#include "scale_shift.h"
#include "scale_shift_tiling_key.h"

template <int D_T_X, bool ALIGNED>
__global__ __aicore__ void scale_shift(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleShiftTilingData);
    GET_TILING_DATA_WITH_STRUCT(ScaleShiftTilingData, tilingData, tiling);
    NsScaleShift::ScaleShift<typename TypeFromId<D_T_X>::type, ALIGNED> op;
    op.Init(x, y, &tilingData);
    op.Process();
}
