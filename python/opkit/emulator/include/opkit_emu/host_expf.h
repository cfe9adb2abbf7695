// Exp's element function, eight or sixteen lanes at a time: the host libm's expf (what std::exp(float) returns),
// bitwise, without a library call per element. Exp is the costliest vector instruction of softmax and GELU
// kernels on the emulator; a call to expf per element runs at about a fifth of the speed of this loop.
//
// glibc (2.27 and later) computes expf as exp(x) = 2^(k/32) * 2^(r/32) with k = round(x * 32/ln2),
// 2^(k/32) from a 32-entry table and 2^(r/32) from a cubic, in double precision (sysdeps/ieee754/flt-32/
// e_expf.c and e_exp2f_data.c; on a CPU with AVX2 and FMA its ifunc picks the variant built with FMA,
// __expf_fma). exp4_fma below does the same operations in the same order, four doubles per instruction, and
// exp8_512 eight (AVX-512F hosts: loop_512): the same rounding in every lane. loop_512 ran at 1.25-1.4x loop_fma's
// speed on one CPU only (a Sapphire Rapids class Xeon, docs/emulator.md "Host ISA figures"); it is picked on any
// AVX-512F CPU, and on one that splits or down-clocks 512-bit work (Zen 4, Skylake-SP) the gain is unmeasured.
// Inputs outside the main path (|x| >= 88, inf, NaN) take expf itself.
// The table is 2^(i/32) rounded to the nearest double (its bits minus i << 47, as glibc stores it); the
// constants are glibc's.
//
// Nothing here is assumed about the host: the first Exp of a process compares the loop it would run with std::exp
// on 2^16 inputs spread over every float exponent (all table entries, both signs, the edges of the
// main path). A libm that differs in one bit (musl, an older glibc, a CPU without AVX2/FMA) keeps
// calling std::exp per element.
#pragma once
#include "opkit_emu/host_math.h"
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define OPKIT_EMU_HOST_EXPF_VECTOR 1
#endif

namespace opkit_emu {
namespace host_expf {

// The scalar reference: the host's expf.
inline float scalar(float x) { return hm::exp(x); }

#ifdef OPKIT_EMU_HOST_EXPF_VECTOR
inline constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
inline constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
inline constexpr double kShift = 0x1.8p+52;               // adding it rounds to an integer
inline constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13, kC2 = 0x1.62e42ff0c52d6p-6;

// Four lanes of the main path (|x| < 88): x already widened to double.
__attribute__((target("avx2,fma"), always_inline)) inline __m128 exp4_fma(__m256d xd) {
  const __m256d zs = _mm256_fmadd_pd(_mm256_set1_pd(kInvLn2N), xd, _mm256_set1_pd(kShift));  // k + shift
  const __m256i ki = _mm256_castpd_si256(zs);
  const __m256d kd = _mm256_sub_pd(zs, _mm256_set1_pd(kShift));
  const __m256d r = _mm256_fmsub_pd(_mm256_set1_pd(kInvLn2N), xd, kd);  // x * 32/ln2 - k, one rounding
  const __m256i idx = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
  const __m256i t = _mm256_add_epi64(_mm256_i64gather_epi64(reinterpret_cast<const long long*>(kTable), idx, 8),
                                     _mm256_slli_epi64(ki, 47));
  const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(kC0), _mm256_set1_pd(kC1));
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(kC2), _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(z, r2, y);
  y = _mm256_mul_pd(y, _mm256_castsi256_pd(t));
  return _mm256_cvtpd_ps(y);
}

// d[i] = expf(a[i]) for n elements (d may be a).
__attribute__((target("avx2,fma"), noinline)) static void loop_fma(float* d, const float* a, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(a + i);
    // lanes off the main path: |x| >= 88 (top 12 bits of the magnitude >= those of 88.0f), inf, NaN
    const __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    const int odd = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x429))));
    const __m128 lo = exp4_fma(_mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    const __m128 hi = exp4_fma(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
    if (__builtin_expect(odd != 0, 0)) {
      float in[8], out[8];
      _mm256_storeu_ps(in, x);
      _mm_storeu_ps(out, lo);
      _mm_storeu_ps(out + 4, hi);
      for (int k = 0; k < 8; ++k)
        if (odd >> k & 1) out[k] = scalar(in[k]);
      std::memcpy(d + i, out, sizeof out);
    } else {
      _mm_storeu_ps(d + i, lo);
      _mm_storeu_ps(d + i + 4, hi);
    }
  }
  for (; i < n; ++i) d[i] = scalar(a[i]);
}

// Eight lanes of the main path in one 512-bit vector: exp4_fma's operations in the same order (the same roundings),
// the table read with two two-register permutes and a select on bit 4 of the index instead of a gather.
__attribute__((target("avx512f"), always_inline)) inline __m256 exp8_512(__m512d xd) {
  const __m512d zs = _mm512_fmadd_pd(_mm512_set1_pd(kInvLn2N), xd, _mm512_set1_pd(kShift));  // k + shift
  const __m512i ki = _mm512_castpd_si512(zs);
  const __m512d kd = _mm512_sub_pd(zs, _mm512_set1_pd(kShift));
  const __m512d r = _mm512_fmsub_pd(_mm512_set1_pd(kInvLn2N), xd, kd);  // x * 32/ln2 - k, one rounding
  const __m512i* tab = reinterpret_cast<const __m512i*>(kTable);
  const __m512i t0 = _mm512_permutex2var_epi64(_mm512_loadu_si512(tab), ki, _mm512_loadu_si512(tab + 1));
  const __m512i t1 = _mm512_permutex2var_epi64(_mm512_loadu_si512(tab + 2), ki, _mm512_loadu_si512(tab + 3));
  const __mmask8 upper = _mm512_test_epi64_mask(ki, _mm512_set1_epi64(16));  // entries 16..31
  const __m512i t = _mm512_add_epi64(_mm512_mask_blend_epi64(upper, t0, t1), _mm512_slli_epi64(ki, 47));
  const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  y = _mm512_mul_pd(y, _mm512_castsi512_pd(t));
  return _mm512_cvtpd_ps(y);
}

// loop_fma's sixteen lanes at a time; a tail of fewer than 16 runs masked (the absent lanes compute exp(0)).
__attribute__((target("avx512f"), noinline)) static void loop_512(float* d, const float* a, uint32_t n) {
  for (uint32_t i = 0; i < n; i += 16) {
    const __mmask16 live = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(live, a + i);
    const __m512i top = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20), _mm512_set1_epi32(0x7ff));
    const __mmask16 odd = _mm512_cmpgt_epi32_mask(top, _mm512_set1_epi32(0x429)) & live;  // off the main path
    const __m512d xd = _mm512_castps_pd(x);
    const __m256 lo = exp8_512(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_castpd512_pd256(xd))));
    const __m256 hi = exp8_512(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(xd, 1))));
    const __m512 y = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                                          _mm256_castps_pd(hi), 1));
    if (__builtin_expect(odd != 0, 0)) {
      float in[16], out[16];
      _mm512_storeu_ps(in, x);
      _mm512_storeu_ps(out, y);
      for (int k = 0; k < 16; ++k)
        if (odd >> k & 1) out[k] = scalar(in[k]);
      _mm512_mask_storeu_ps(d + i, live, _mm512_loadu_ps(out));
    } else {
      _mm512_mask_storeu_ps(d + i, live, y);
    }
  }
}

// Inputs of the self-check: 2^16 bit patterns spread over all floats, the edges of the main path, specials.
inline bool loop_matches_libm(void (*loop_under_test)(float*, const float*, uint32_t)) {
  static constexpr uint32_t kN = (1u << 16) + 16;
  static float in[kN], out[kN];
  uint32_t k = 0;
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    uint32_t bits = i * 65537u + (i * 2654435761u >> 16);  // every exponent, both signs, varied mantissas
    std::memcpy(&in[k++], &bits, 4);
  }
  const float edges[16] = {88.0f, -88.0f, 0x1.62e42ep6f, -0x1.9fe368p6f, -0x1.9d1d9ep6f, 87.99999f, -87.99999f,
                           0.0f, -0.0f, 1e-45f, -1e-45f, __builtin_inff(), -__builtin_inff(), __builtin_nanf(""), 1.0f, -1.0f};
  for (float e : edges) in[k++] = e;
  loop_under_test(out, in, kN);
  for (uint32_t i = 0; i < kN; ++i) {
    const float ref = scalar(in[i]);
    if (std::memcmp(&ref, &out[i], 4) != 0) return false;
  }
  return true;
}
#endif

// The loop loop() runs in this process, decided once at the first call: 16 (loop_512: AVX-512F), 8 (loop_fma:
// AVX2 + FMA) or 0 (expf per element) -- the widest the CPU has whose self-check passes.
inline int vector_lanes() {
#ifdef OPKIT_EMU_HOST_EXPF_VECTOR
  static const int lanes = [] {
    if (__builtin_cpu_supports("avx512f") && loop_matches_libm(loop_512)) return 16;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && loop_matches_libm(loop_fma)) return 8;
    return 0;
  }();
  return lanes;
#else
  return 0;
#endif
}

// d[i] = expf(a[i]), bitwise; d == a allowed.
inline void loop(float* d, const float* a, uint32_t n) {
#ifdef OPKIT_EMU_HOST_EXPF_VECTOR
  const int lanes = vector_lanes();
  if (lanes == 16) return loop_512(d, a, n);
  if (lanes == 8) return loop_fma(d, a, n);
#endif
  for (uint32_t i = 0; i < n; ++i) d[i] = scalar(a[i]);
}

}  // namespace host_expf
}  // namespace opkit_emu
