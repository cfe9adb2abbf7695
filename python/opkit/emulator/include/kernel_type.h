// CANN's include/basic_api/kernel_type.h on the kernel side: the data type and format ids as macros
// (mirror-cann/asc-devkit include/basic_api/kernel_type.h; the same numbers as ge::DataType / ge::Format in
// hicann/metadef inc/external/graph/types.h). Template-argument kernels compare their DTYPE/FORMAT template
// parameters with these (ascendc/host_api/tiling/template_argument.h).
#pragma once
#ifndef DT_FLOAT
#define DT_FLOAT 0
#define DT_FLOAT16 1
#define DT_INT8 2
#define DT_INT32 3
#define DT_UINT8 4
#define DT_INT16 6
#define DT_UINT16 7
#define DT_UINT32 8
#define DT_INT64 9
#define DT_UINT64 10
#define DT_DOUBLE 11
#define DT_BOOL 12
#define DT_COMPLEX64 16
#define DT_BF16 27
#define DT_INT4 29
#endif
#ifndef FORMAT_ND
#define FORMAT_NCHW 0
#define FORMAT_NHWC 1
#define FORMAT_ND 2
#define FORMAT_NC1HWC0 3
#define FORMAT_FRACTAL_Z 4
#define FORMAT_NDHWC 27
#define FORMAT_FRACTAL_NZ 29
#define FORMAT_NCDHW 30
#endif
