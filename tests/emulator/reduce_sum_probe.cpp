// ReduceSum's float loop (opkit_emu/reduce.h reduce_sum_loop: whole repeats' trees level by level, up to 16 repeats
// at once, in the build's widest vectors) against its definition written out: each 64-float repeat's adjacent-pair
// tree (left element src0; a partial last repeat padded with zeros), then the repeats' results added in order, every
// add the NaN rule's scalar fadd. Compiled by test_reduce_sum_groups.py at -O2 at each ISA level; prints
// "<rows> <mismatches>".
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernel_operator.h"
#include "opkit_emu/reduce.h"
#include "tikicpulib.h"

using namespace opkit_emu;

static uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
static float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

static float plain_repeat(const float* q, uint32_t m) {
  float a[64] = {};
  std::memcpy(a, q, m * sizeof(float));
  for (int w = 32; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] = fadd(a[2 * i], a[2 * i + 1]);
  return a[0];
}
static float plain_sum(const float* p, uint32_t n) {
  float acc = 0.0f;
  for (uint32_t base = 0; base < n; base += 64) {
    const float r = plain_repeat(p + base, n - base < 64 ? n - base : 64);
    acc = base == 0 ? r : fadd(acc, r);
  }
  return acc;
}

int main() {
  // NaNs of both signs, quiet and signalling, with payloads; infinities (inf - inf: the default NaN); huge values
  static const uint32_t specials[] = {0x7FC00001u, 0xFFC00002u, 0x7F800003u, 0xFF800004u,
                                      0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0x80000000u};
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int rows = 0, bad = 0;
  for (int r = 0; r < 6000; ++r) {
    // every count 1..2112 (up to 33 repeats: groups of 16, a group's remainder, a partial last repeat), then random
    const uint32_t n = r < 2112 ? r + 1 : 1 + g() % 6000;
    const int mode = r % 4;   // 0: finite; 1: a few specials; 2: many specials; 3: ties of small integers
    std::vector<float> v(n + 1);
    const uint32_t off = r % 2;   // unaligned starts too
    for (uint32_t i = 0; i < n; ++i) {
      float x = std::ldexp(u(g), static_cast<int>(g() % 40) - 20);
      if ((mode == 1 && g() % 97 == 0) || (mode == 2 && g() % 5 == 0)) x = from_bits(specials[g() % 8]);
      if (mode == 3) x = static_cast<float>(g() % 4);
      v[off + i] = x;
    }
    bad += bits(reduce_sum_loop<float>(v.data() + off, n)) != bits(plain_sum(v.data() + off, n));
    ++rows;
  }
  std::printf("%d %d\n", rows, bad);
  return 0;
}
