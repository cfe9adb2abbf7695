// CANN's CPU-debug kernel build has openEuler's securec on its include path, and ops-nn kernels include it under
// ASCENDC_CPU_DEBUG (experimental/loss/nll_loss: memcpy_s in their GET_TILING_DATA_WITH_STRUCT). The bounds-checked
// functions they call, with securec's names and return convention (EOK = 0; a destination too small is an error
// code, nothing copied). Host code gets opkit's host stand-in of the same header (opkit.cannproject).
#pragma once
#include <cstddef>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif
#ifndef OPKIT_SECUREC_ERANGE
#define OPKIT_SECUREC_ERANGE 34
#endif
typedef int errno_t;
inline errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
  if (!dest || !src || count > destMax) return OPKIT_SECUREC_ERANGE;
  std::memmove(dest, src, count);
  return EOK;
}
inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count) {
  if (!dest || count > destMax) return OPKIT_SECUREC_ERANGE;
  std::memset(dest, c, count);
  return EOK;
}
inline errno_t memmove_s(void* dest, size_t destMax, const void* src, size_t count) {
  return memcpy_s(dest, destMax, src, count);
}
