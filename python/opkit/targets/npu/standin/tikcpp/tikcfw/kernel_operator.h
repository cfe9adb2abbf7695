// opkit --check-only STAND-IN for CANN's kernel_operator.h, for PREPROCESSING a kernel only (-E), the way
// CANN's build preprocesses it before reading it with Python. NOT CANN's header: it spells only what
// those readers look for, in the device compiler's form:
//  - the kernel entry: `__global__ __aicore__` as the device compiler expands them, which
//    extract_host_stub.py's signature pattern matches (asc-devkit cmake/asc/legacy_modules/util/
//    constants.py:16-22) to name the generated aclrtlaunch_<kernel>.h;
//  - the tiling registration: with __CHECK_FEATURE_AT_PRECOMPILE (the precompile step defines it), the
//    marker text the kernel compile scans for (contract of impl/basic_api/utils/kernel_utils_macros.h:363-385,
//    read by tools/build/asc_op_compile_base/adapter/kernel_info_infer.py:136-161).
// It lives in a `tikcpp/tikcfw` folder as CANN's headers do, so that scan skips its lines as it skips CANN's.
#ifndef OPKIT_STANDIN_KERNEL_OPERATOR_H
#define OPKIT_STANDIN_KERNEL_OPERATOR_H
#include <stdint.h>
#define __global__ __attribute__((cce_kernel))
#define __aicore__ [aicore]
#define __gm__ __attribute__((cce_global))
#define GM_ADDR __gm__ uint8_t*
#ifdef __CHECK_FEATURE_AT_PRECOMPILE
#define REGISTER_TILING_DEFAULT(tiling_struct) auto __enable_custom_tiling tiling_struct = default
#define REGISTER_TILING_FOR_TILINGKEY(expr, tiling_struct) auto __enable_custom_tiling tiling_struct = expr
#define REGISTER_NONE_TILING auto __enable_no_register_custom_tiling ascendc_trigger_tiling_struct = default
#else
#define REGISTER_TILING_DEFAULT(tiling_struct)
#define REGISTER_TILING_FOR_TILINGKEY(expr, tiling_struct)
#define REGISTER_NONE_TILING
#endif
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, var, tiling) tiling_struct var
#define GET_TILING_DATA(var, tiling) opkit_standin_tiling var
#define GET_TILING_DATA_MEMBER(tiling_struct, member, var, tiling) auto var = 0
#endif
