// ScaleShift template arguments: the input dtype and whether the data ends on a 32-byte boundary.
#ifndef SCALE_SHIFT_TILING_KEY_H
#define SCALE_SHIFT_TILING_KEY_H
#include "ascendc/host_api/tiling/template_argument.h"

ASCENDC_TPL_ARGS_DECL(ScaleShift,
    ASCENDC_TPL_DATATYPE_DECL(D_T_X, C_DT_FLOAT, C_DT_FLOAT16),
    ASCENDC_TPL_BOOL_DECL(ALIGNED, 0, 1));

ASCENDC_TPL_SEL(
    ASCENDC_TPL_ARGS_SEL(
        ASCENDC_TPL_DATATYPE_SEL(D_T_X, C_DT_FLOAT, C_DT_FLOAT16),
        ASCENDC_TPL_BOOL_SEL(ALIGNED, 0, 1)));
#endif
