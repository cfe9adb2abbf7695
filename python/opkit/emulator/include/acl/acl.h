// The part of CANN's acl/acl.h that a CPU-debug program touches outside its `#ifndef ASCENDC_CPU_DEBUG`
// device branch: the types and constants the samples' data_utils.h uses (aclError, ACL_ERROR_NONE,
// aclFloat16 and its conversions, stream/context handles). No runtime function is declared: code that
// would run on the device must stay behind `#ifndef ASCENDC_CPU_DEBUG`, and using it here is a compile
// error rather than a call that silently does nothing. A CANN `.asc` program (host main + kernel + `<<<>>>`
// launch in one file) gets the runtime from acl/acl_rt.h: `opkit run-asc` defines OPKIT_ASC_PROGRAM.
#pragma once
#include <cstdint>

#include "opkit_emu/types.h"

typedef int aclError;
typedef uint16_t aclFloat16;
typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE
} aclrtMemcpyKind;
typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY
} aclrtMemMallocPolicy;
typedef enum {
  ACL_DT_UNDEFINED = -1, ACL_FLOAT = 0, ACL_FLOAT16 = 1, ACL_INT8 = 2, ACL_INT32 = 3, ACL_UINT8 = 4,
  ACL_INT16 = 6, ACL_UINT16 = 7, ACL_UINT32 = 8, ACL_INT64 = 9, ACL_UINT64 = 10, ACL_DOUBLE = 11, ACL_BOOL = 12,
  ACL_BF16 = 27
} aclDataType;

// IEEE binary16 <-> float, round to nearest even (the emulator's half conversion).
inline float aclFloat16ToFloat(aclFloat16 v) { return opkit_emu::half_bits_to_float(v); }
inline aclFloat16 aclFloatToFloat16(float v) { return opkit_emu::float_to_half_bits(v); }

#ifdef OPKIT_ASC_PROGRAM
#include "acl/acl_rt.h"
#endif
