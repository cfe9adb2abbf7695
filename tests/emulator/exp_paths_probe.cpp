// Exp's vector loops (opkit_emu/host_expf.h) against the host's expf, bitwise, each loop the CPU can run, called
// directly (host_expf::loop runs only the widest one): loop_fma (AVX2 + FMA) and loop_512 (AVX-512F). Every 97th
// float bit pattern (all exponents, both signs, NaN, inf) in blocks of 4096, then every length 1..80 at every start
// offset 0..15 (loop_512's masked tail). Compiled by test_exp_paths.py; prints, per loop, "<name> <ran 0/1>
// <tested> <mismatches>".
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernel_operator.h"
#include "tikicpulib.h"

namespace {

uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

using Loop = void (*)(float*, const float*, uint32_t);

void sweep(const char* name, bool ran, Loop loop) {
  uint64_t tested = 0, bad = 0;
  if (ran) {
    std::vector<float> in, out;
    for (uint64_t b = 0; b < (1ull << 32); b += 97) {
      const uint32_t u = static_cast<uint32_t>(b);
      float f;
      std::memcpy(&f, &u, 4);
      in.push_back(f);
      if (in.size() == 4096 || b + 97 >= (1ull << 32)) {
        out.assign(in.size(), 0.0f);
        loop(out.data(), in.data(), static_cast<uint32_t>(in.size()));
        for (size_t i = 0; i < in.size(); ++i) bad += bits(out[i]) != bits(std::exp(in[i]));
        tested += in.size();
        in.clear();
      }
    }
    float src[96 + 16], dst[96 + 16];
    for (int i = 0; i < 96 + 16; ++i) src[i] = -90.0f + 1.7f * static_cast<float>(i);  // both sides of |x| = 88
    for (uint32_t n = 1; n <= 80; ++n)
      for (uint32_t off = 0; off < 16; ++off) {
        for (float& x : dst) x = -1.0f;
        loop(dst + off, src + off, n);
        for (uint32_t i = 0; i < 96 + 16; ++i) {
          const bool inside = i >= off && i < off + n;  // outside: untouched
          bad += bits(dst[i]) != bits(inside ? std::exp(src[i]) : -1.0f);
        }
        tested += n;
      }
  }
  std::printf("%s %d %llu %llu\n", name, ran ? 1 : 0, static_cast<unsigned long long>(tested),
              static_cast<unsigned long long>(bad));
}

}  // namespace

int main() {
  using namespace opkit_emu::host_expf;
  sweep("loop_fma", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), loop_fma);
  sweep("loop_512", __builtin_cpu_supports("avx512f"), loop_512);
  return 0;
}
