// ReduceSum's float definition written out for the probes (reduce_sum_probe.cpp, test_fast_loops.cpp): one 256-byte
// repeat's adjacent-pair tree level by level (facts §3 "Reductions"; the left element src0, every add the NaN rule's
// scalar fadd), a partial repeat's masked-off lanes as zeros, and the repeats' results added in order.
#pragma once
#include <cstdint>
#include <cstring>

#include "opkit_emu/nan_rule.h"

// The first m (<= 64) floats of q as one repeat.
inline float plain_tree(const float* q, uint32_t m = 64) {
  float a[64] = {};
  std::memcpy(a, q, m * sizeof(float));
  for (int w = 32; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] = opkit_emu::fadd(a[2 * i], a[2 * i + 1]);
  return a[0];
}

// The count form's whole row: each repeat's tree, the results added in order.
inline float plain_sum(const float* p, uint32_t n) {
  float acc = 0.0f;
  for (uint32_t base = 0; base < n; base += 64) {
    const float r = plain_tree(p + base, n - base < 64 ? n - base : 64);
    acc = base == 0 ? r : opkit_emu::fadd(acc, r);
  }
  return acc;
}
