// Kernel side of CANN's template-argument tiling (ascendc/host_api/tiling/template_argument.h).
//
// CANN (mirror-cann/asc-devkit include/utils/tiling/template_argument.h, read not copied): compiled for the
// kernel (ASCENDC_TPL_KERNEL) the ASCENDC_TPL_*_DECL / _SEL / ARGS / SEL macros expand to nothing, and
// TypeFromId<id>::type maps a DTYPE template argument back to its C++ type. The build instantiates the
// templated kernel entry once per selected combination and launches the one the tiling key encodes; opkit's
// CANN import does that decoding (docs/cann.md). The host side (g_tilingDeclareParams, GET_TPL_TILING_KEY,
// ASCENDC_TPL_SEL_PARAM) is in python/opkit/cannproject/include.
#pragma once
#include <cstdint>

#include "kernel_type.h"
#include "opkit_emu/types.h"

#define ASCENDC_TPL_AIV_ONLY 0
#define ASCENDC_TPL_AIC_ONLY 1
#define ASCENDC_TPL_MIX_AIV_1_0 4
#define ASCENDC_TPL_MIX_AIC_1_0 5
#define ASCENDC_TPL_MIX_AIC_1_1 6
#define ASCENDC_TPL_MIX_AIC_1_2 7
#define ASCENDC_TPL_AICORE 8
#define ASCENDC_TPL_VECTORCORE 9
#define ASCENDC_TPL_MIX_AICORE 10
#define ASCENDC_TPL_MIX_VECTOR_CORE 11
#define ASCENDC_TPL_1_BW 1
#define ASCENDC_TPL_2_BW 2
#define ASCENDC_TPL_4_BW 4
#define ASCENDC_TPL_8_BW 8
#define ASCENDC_TPL_DTYPE 0
#define ASCENDC_TPL_FORMAT 1
#define ASCENDC_TPL_UINT 2
#define ASCENDC_TPL_BOOL 3
#define ASCENDC_TPL_INPUT_BIAS 100000000
#define ASCENDC_TPL_OUTPUT_BIAS 900000000
#define ASCENDC_TPL_INPUT(x) (ASCENDC_TPL_INPUT_BIAS + (x))
#define ASCENDC_TPL_OUTPUT(x) (ASCENDC_TPL_OUTPUT_BIAS + (x))
#define ASCENDC_TPL_UI_RANGE 0
#define ASCENDC_TPL_UI_LIST 1
#define ASCENDC_TPL_UI_MIX 2

template <int dataTypeId>
struct TypeFromId {
  using type = void;
};
#define OPKIT_TPL_TYPE_FROM_ID(id, T) \
  template <>                         \
  struct TypeFromId<id> {             \
    using type = T;                   \
  }
OPKIT_TPL_TYPE_FROM_ID(DT_FLOAT, float);
OPKIT_TPL_TYPE_FROM_ID(DT_FLOAT16, half);
OPKIT_TPL_TYPE_FROM_ID(DT_INT8, int8_t);
OPKIT_TPL_TYPE_FROM_ID(DT_INT32, int32_t);
OPKIT_TPL_TYPE_FROM_ID(DT_UINT8, uint8_t);
OPKIT_TPL_TYPE_FROM_ID(DT_INT16, int16_t);
OPKIT_TPL_TYPE_FROM_ID(DT_UINT16, uint16_t);
OPKIT_TPL_TYPE_FROM_ID(DT_INT64, int64_t);
OPKIT_TPL_TYPE_FROM_ID(DT_UINT32, uint32_t);
OPKIT_TPL_TYPE_FROM_ID(DT_UINT64, uint64_t);
OPKIT_TPL_TYPE_FROM_ID(DT_DOUBLE, double);
OPKIT_TPL_TYPE_FROM_ID(DT_BOOL, bool);
OPKIT_TPL_TYPE_FROM_ID(DT_BF16, bfloat16_t);
#undef OPKIT_TPL_TYPE_FROM_ID

#define ASCENDC_TPL_DTYPE_DECL(...)
#define ASCENDC_TPL_DATATYPE_DECL(...)
#define ASCENDC_TPL_FORMAT_DECL(...)
#define ASCENDC_TPL_UINT_DECL(...)
#define ASCENDC_TPL_BOOL_DECL(...)
#define ASCENDC_TPL_KERNEL_TYPE_DECL(...)
#define ASCENDC_TPL_DTYPE_SEL(...)
#define ASCENDC_TPL_DATATYPE_SEL(...)
#define ASCENDC_TPL_FORMAT_SEL(...)
#define ASCENDC_TPL_UINT_SEL(...)
#define ASCENDC_TPL_BOOL_SEL(...)
#define ASCENDC_TPL_TILING_STRUCT_SEL(...)
#define ASCENDC_TPL_KERNEL_TYPE_SEL(...)
#define ASCENDC_TPL_DETERMINISTIC_SEL(...)
#define ASCENDC_TPL_SHARED_KERNEL_TYPE_SEL(...)
#define ASCENDC_TPL_ARGS_DECL(...)
#define ASCENDC_TPL_ARGS_SEL(...)
#define ASCENDC_TPL_SEL(...)
