// graph/c_types.h: the C enums of ge::DataType / ge::Format (hicann/metadef inc/external/graph/c_types.h; the same
// numbers as graph/types.h). An op's op_kernel/<op>_tiling_key.h names them in ASCENDC_TPL_DATATYPE_DECL and is
// included by both its host code and its kernel, so the header is on both paths (opkit cflags and the CANN host
// runner, docs/cann.md).
#pragma once
// C enums of graph/c_types.h (used by ASCENDC_TPL_DATATYPE_DECL), same numbers as ge::DataType.
enum C_DataType {
  C_DT_FLOAT = 0, C_DT_FLOAT16 = 1, C_DT_INT8 = 2, C_DT_INT32 = 3, C_DT_UINT8 = 4, C_DT_INT16 = 6, C_DT_UINT16 = 7,
  C_DT_UINT32 = 8, C_DT_INT64 = 9, C_DT_UINT64 = 10, C_DT_DOUBLE = 11, C_DT_BOOL = 12, C_DT_STRING = 13,
  C_DT_COMPLEX64 = 16, C_DT_COMPLEX128 = 17, C_DT_BF16 = 27, C_DT_UNDEFINED = 28, C_DT_INT4 = 29
};
enum C_Format { C_FORMAT_NCHW = 0, C_FORMAT_NHWC = 1, C_FORMAT_ND = 2, C_FORMAT_NC1HWC0 = 3, C_FORMAT_FRACTAL_Z = 4,
                C_FORMAT_NDHWC = 27, C_FORMAT_FRACTAL_NZ = 29, C_FORMAT_NCDHW = 30 };

