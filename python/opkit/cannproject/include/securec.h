// The bounds-checked C functions CANN's host code uses (openEuler securec), for opkit's CPU run of op_host
// code: the same names and return convention (EOK = 0), implemented here.
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstring>
#ifndef EOK
#define EOK 0
#endif
typedef int errno_t;
inline errno_t memcpy_s(void* dst, size_t dst_max, const void* src, size_t n) {
  if (!dst || !src || n > dst_max) return 34;  // ERANGE
  std::memmove(dst, src, n);
  return EOK;
}
inline errno_t memset_s(void* dst, size_t dst_max, int c, size_t n) {
  if (!dst || n > dst_max) return 34;
  std::memset(dst, c, n);
  return EOK;
}
inline errno_t strcpy_s(char* dst, size_t dst_max, const char* src) {
  if (!dst || !src || std::strlen(src) >= dst_max) return 34;
  std::strcpy(dst, src);
  return EOK;
}
#define sprintf_s(buf, max, ...) std::snprintf((buf), (max), __VA_ARGS__)
#define snprintf_s(buf, max, count, ...) std::snprintf((buf), (max), __VA_ARGS__)
