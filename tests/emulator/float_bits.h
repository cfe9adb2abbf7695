// A float's bit pattern and back, for the bitwise probes (nan_rule_probe.cpp, reduce_sum_probe.cpp): memcpy, since
// C++17 has no std::bit_cast.
#pragma once
#include <cstdint>
#include <cstring>

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
