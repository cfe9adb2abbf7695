// ReduceSum's float loop (opkit_emu/reduce.h reduce_sum_loop: in 32- and 64-byte builds whole repeats' trees level by
// level, up to 16 repeats at once; in 16-byte ones and for few repeats a repeat's tree at a time) against its definition written out: each 64-float repeat's adjacent-pair
// tree (left element src0; a partial last repeat padded with zeros), then the repeats' results added in order, every
// add the NaN rule's scalar fadd (plain_tree.h). Compiled by test_reduce_sum_groups.py at -O2 at each ISA level; prints
// "<rows> <mismatches>".
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernel_operator.h"
#include "opkit_emu/reduce.h"
#include "tikicpulib.h"
#include "plain_tree.h"
#include "float_bits.h"

using namespace opkit_emu;

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
    // 0: finite; 1: a few specials; 2: many specials; 3: ties of small integers; 4: any exponent (subnormals,
    // partial sums that overflow to infinity and then meet the other sign's)
    const int mode = r % 5;
    std::vector<float> v(n + 16);
    const uint32_t off = (r / 5) % 16;   // every start offset inside a 64-byte line, each mode with each
    for (uint32_t i = 0; i < n; ++i) {
      float x = std::ldexp(u(g), static_cast<int>(g() % (mode == 4 ? 300 : 40)) - (mode == 4 ? 150 : 20));
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
