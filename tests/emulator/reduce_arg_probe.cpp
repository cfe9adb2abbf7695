// ReduceMax / ReduceMin's index loop (opkit_emu/reduce.h reduce_arg_loop: four vectors of the build's widest: 64
// lanes at x86-64-v4, 32 at v3, 16 below) against the sequential scan it stands for: the first NaN's index if there
// is one, else the index `if (v > best)` ends on (the first index wins ties; -0 == +0).
// Rows: every count 1..600 and random ones up to 5000; values finite, with infinities / signed zeros / huge ones,
// small-integer ties, or drawn from {+0, -0, +1, -1, +inf, -inf}; NaNs at random places and first; float, half,
// bfloat16; max and min. Then built rows for the chain merge's tie rule (built_rows below). Compiled by
// test_reduce_arg_lanes.py at -O2 at each ISA level; prints "<rows> <mismatches>".
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "kernel_operator.h"
#include "opkit_emu/reduce.h"
#include "tikicpulib.h"

template <class T, bool IsMax>
uint32_t scan(const T* p, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (opkit_emu::to_f(p[i]) != opkit_emu::to_f(p[i])) return i;
  uint32_t at = 0;
  float best = opkit_emu::to_f(p[0]);
  for (uint32_t i = 1; i < n; ++i) {
    const float v = opkit_emu::to_f(p[i]);
    if (IsMax ? v > best : v < best) best = v, at = i;
  }
  return at;
}

template <class T>
int check(const std::vector<float>& f) {
  const std::vector<T> v(f.begin(), f.end());
  const uint32_t n = static_cast<uint32_t>(v.size());
  return (opkit_emu::reduce_arg_loop<T, true>(v.data(), n) != scan<T, true>(v.data(), n)) +
         (opkit_emu::reduce_arg_loop<T, false>(v.data(), n) != scan<T, false>(v.data(), n));
}

// Rows the random ones almost never give: a run of a non-extreme value, the extreme (+-0, or an equal finite value)
// first in chain u > 0 and then again at the same lane in a later step of chain 0, so the chain merge must keep the
// smaller index on an == tie of different bits (-0 vs +0). For every vector width a build can have (4, 8, 16 floats;
// a step is four vectors), lanes first / middle / last, chains 1..3, chain 0's step 1 or 2, with and without a tail.
// fill < extreme for max, > extreme for min; returns the number of rows checked.
int built_rows(int& bad) {
  struct Pair { float fill_max, fill_min, first, later; };
  static const Pair pairs[] = {{-1.0f, 1.0f, -0.0f, 0.0f}, {-1.0f, 1.0f, 0.0f, -0.0f}, {-1.0f, 3.0f, 2.0f, 2.0f}};
  int rows = 0;
  for (uint32_t w : {4u, 8u, 16u})
    for (uint32_t u = 1; u < 4; ++u)
      for (uint32_t k : {0u, w / 2, w - 1})
        for (uint32_t m = 1; m < 3; ++m)
          for (uint32_t tail : {0u, 5u})
            for (const Pair& pr : pairs)
              for (int is_max = 0; is_max < 2; ++is_max) {
                const uint32_t n = 3 * 4 * w + tail;
                std::vector<float> f(n, is_max ? pr.fill_max : pr.fill_min);
                f[u * w + k] = pr.first;       // chain u, step 0, lane k
                f[m * 4 * w + k] = pr.later;   // chain 0, step m, lane k
                const std::vector<half> h(f.begin(), f.end());
                const std::vector<bfloat16_t> b(f.begin(), f.end());
                if (is_max)
                  bad += (opkit_emu::reduce_arg_loop<float, true>(f.data(), n) != scan<float, true>(f.data(), n)) +
                         (opkit_emu::reduce_arg_loop<half, true>(h.data(), n) != scan<half, true>(h.data(), n)) +
                         (opkit_emu::reduce_arg_loop<bfloat16_t, true>(b.data(), n) !=
                          scan<bfloat16_t, true>(b.data(), n));
                else
                  bad += (opkit_emu::reduce_arg_loop<float, false>(f.data(), n) != scan<float, false>(f.data(), n)) +
                         (opkit_emu::reduce_arg_loop<half, false>(h.data(), n) != scan<half, false>(h.data(), n)) +
                         (opkit_emu::reduce_arg_loop<bfloat16_t, false>(b.data(), n) !=
                          scan<bfloat16_t, false>(b.data(), n));
                ++rows;
              }
  return rows;
}

int main() {
  static const float specials[] = {INFINITY, -INFINITY, 0.0f, -0.0f, 3.0e38f, -3.0e38f, 1e-45f, 1.0f};
  static const float alphabet[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY};
  std::mt19937 g(19);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int rows = 0, bad = 0;
  for (int r = 0; r < 4000; ++r) {
    const uint32_t n = r < 600 ? r + 1 : 1 + g() % 5000;
    const int mode = r % 4;  // 0 finite, 1 specials, 2 ties, 3 the small alphabet (a random non-empty subset)
    uint32_t subset = 0;
    while (subset == 0) subset = g() % 64;
    std::vector<float> f(n);
    for (auto& x : f) {
      x = std::ldexp(u(g), static_cast<int>(g() % 40) - 20);
      if (mode == 1 && g() % 6 == 0) x = specials[g() % 8];
      if (mode == 2) x = static_cast<float>(g() % 4);
      if (mode == 3) {
        uint32_t k;
        do k = g() % 6; while (!(subset >> k & 1));
        x = alphabet[k];
      }
    }
    if (r % 5 == 1) f[g() % n] = NAN;
    if (r % 23 == 2) f[0] = NAN;
    bad += check<float>(f) + check<half>(f) + check<bfloat16_t>(f);
    ++rows;
  }
  rows += built_rows(bad);
  std::printf("%d %d\n", rows, bad);
  return 0;
}
