// Scalar functions the device compiler's environment declares at global scope, which public kernels call
// unqualified: min / max. Under bisheng, `max(int64_t, int)` is "call to 'max' is ambiguous" (tilelang-ascend
// PR #1309: the Ascend C++ environment declares unqualified min/max overloads per type), so they are overloads
// per scalar type here too, not one template: same-type calls resolve, mixed integer widths stay ambiguous.
// Non-template, so a kernel's own `std::min` (or `using namespace std`) keeps working: for equal argument
// types a non-template is preferred over std::min<T>.
#pragma once
#include <cstdint>

#include "opkit_emu/types.h"

#define OPKIT_EMU_MINMAX(T)                                            \
  inline T min(T a, T b) { return b < a ? b : a; }                     \
  inline T max(T a, T b) { return a < b ? b : a; }
OPKIT_EMU_MINMAX(int32_t)
OPKIT_EMU_MINMAX(uint32_t)
OPKIT_EMU_MINMAX(int64_t)
OPKIT_EMU_MINMAX(uint64_t)
OPKIT_EMU_MINMAX(float)
OPKIT_EMU_MINMAX(double)
OPKIT_EMU_MINMAX(half)
#undef OPKIT_EMU_MINMAX
