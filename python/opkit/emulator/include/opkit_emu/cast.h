// Cast with RoundMode. Facts sheet §3 "Cast": allowed (src, dst, mode) table for A2 and 310P, modes
// NONE (= RINT when precision is lost), RINT (ties to even), FLOOR, CEIL, ROUND (ties away from zero),
// TRUNC, ODD (round to odd). Finite values beyond the destination's range: on A2 (910B) they become +-inf
// as IEEE rounding gives them (Inf/NaN mode is A2's default, CANN aclrtFloatOverflowMode), on 310P they
// saturate to the largest finite value (saturation mode). An unsupported pair is a compile error;
// an unsupported mode is a compile error when the mode is a constant the optimiser can see (the usual
// literal), otherwise the call reports rule `dtype-unsupported`.
#pragma once
#include <cfloat>
#include <limits>
#include "opkit_emu/host_math.h"

#include "opkit_emu/vector.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(OPKIT_EMU_NO_F16C)
#include <immintrin.h>
#define OPKIT_EMU_F16C 1
#endif

namespace AscendC {
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD, CAST_HYBRID };
}

namespace opkit_emu {
using AscendC::RoundMode;

constexpr uint32_t M(RoundMode m) { return 1u << static_cast<int>(m); }
constexpr uint32_t kFive = M(RoundMode::CAST_RINT) | M(RoundMode::CAST_FLOOR) | M(RoundMode::CAST_CEIL) |
                           M(RoundMode::CAST_ROUND) | M(RoundMode::CAST_TRUNC);
constexpr uint32_t kNone = M(RoundMode::CAST_NONE);
constexpr uint32_t kOdd = M(RoundMode::CAST_ODD);
constexpr uint32_t kAll = kFive | kNone | kOdd;

// Allowed modes for Cast<D, S> on this chip (0: the pair does not exist).
template <class D, class S>
constexpr uint32_t cast_modes() {
  using std::is_same;
  if constexpr (is_same<S, half>::value && is_same<D, float>::value) return kNone;
  else if constexpr (is_same<S, bfloat16_t>::value && is_same<D, float>::value) return kIs310P ? 0 : kNone;
  else if constexpr (is_same<S, float>::value && is_same<D, half>::value) return kIs310P ? (kOdd | kNone) : (kFive | kOdd | kNone);
  else if constexpr (is_same<S, float>::value && is_same<D, bfloat16_t>::value) return kIs310P ? 0 : kFive;
  else if constexpr (is_same<S, float>::value && is_same<D, float>::value) return kFive;
  else if constexpr (is_same<S, float>::value && (is_same<D, int32_t>::value || is_same<D, int16_t>::value || is_same<D, int64_t>::value)) return kFive;
  else if constexpr (is_same<S, int32_t>::value && is_same<D, float>::value) return kFive | kNone;
  else if constexpr (is_same<S, half>::value && is_same<D, int32_t>::value) return kFive;
  else if constexpr (is_same<S, half>::value && (is_same<D, int8_t>::value || is_same<D, uint8_t>::value)) return kFive | kNone;
  // The rest of the A2 table (Cast.md, mirror-cann/asc-devkit 7359511d); the 310P table is not modelled
  // for these pairs, so they are A2-only here.
  else if constexpr (kIs310P) return 0;
  // int4b_t (Cast.md A2 table, asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/类型转换/Cast.md:221, 226;
  // impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h:901-968: vconv_f162s4{r,f,c,a,z,} and vconv_s42f16).
  else if constexpr (is_same<S, int4b_t>::value && is_same<D, half>::value) return kNone;
  else if constexpr (is_same<S, half>::value && is_same<D, int4b_t>::value) return kFive | kNone;
  else if constexpr ((is_same<S, int8_t>::value || is_same<S, uint8_t>::value) && is_same<D, half>::value) return kNone;
  else if constexpr (is_same<S, int16_t>::value && is_same<D, half>::value) return kFive | kNone;
  else if constexpr (is_same<S, int16_t>::value && is_same<D, float>::value) return kNone;
  else if constexpr (is_same<S, half>::value && is_same<D, int16_t>::value) return kFive;
  else if constexpr (is_same<S, bfloat16_t>::value && is_same<D, int32_t>::value) return kFive;
  else if constexpr (is_same<S, int32_t>::value && is_same<D, int16_t>::value) return kNone;
  else if constexpr (is_same<S, int32_t>::value && is_same<D, half>::value) return kAll;  // mode ignored: SetDeqScale
  else if constexpr (is_same<S, int32_t>::value && is_same<D, int64_t>::value) return kNone;
  else if constexpr (is_same<S, int64_t>::value && is_same<D, int32_t>::value) return kNone;
  else if constexpr (is_same<S, int64_t>::value && is_same<D, float>::value) return kFive;
  else return 0;
}

inline const char* mode_name(RoundMode m) {
  static const char* n[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD", "CAST_HYBRID"};
  int i = static_cast<int>(m);
  return (i >= 0 && i < 8) ? n[i] : "?";
}


// Rounds a finite double to a binary floating format with p significand bits and minimum normal
// exponent emin (subnormals included), using the given mode. The result is exactly representable.
inline double round_to_format(double v, int p, int emin, RoundMode m) {
  if (v == 0.0 || !hm::isfinite(v)) return v;
  int e;
  hm::frexp(v, &e);
  int lead = std::max(e - 1, emin);
  double ulp = hm::ldexp(1.0, lead - (p - 1));
  double q = v / ulp, r;
  switch (m) {
    case RoundMode::CAST_FLOOR: r = hm::floor(q); break;
    case RoundMode::CAST_CEIL: r = hm::ceil(q); break;
    case RoundMode::CAST_TRUNC: r = hm::trunc(q); break;
    case RoundMode::CAST_ROUND: r = hm::round(q); break;
    case RoundMode::CAST_ODD: {
      r = hm::trunc(q);
      if (r != q && hm::trunc(r * 0.5) == r * 0.5) r += (q > 0 ? 1.0 : -1.0);  // inexact and even: to odd
      break;
    }
    default: r = hm::nearbyint(q); break;  // RINT / NONE: ties to even
  }
  return r * ulp;
}
inline double sat(double v, double maxv) { return v > maxv ? maxv : (v < -maxv ? -maxv : v); }
// A float result beyond +-maxv after rounding: 310P saturates; A2 (Inf/NaN mode) overflows as IEEE 754 does
// for the rounding direction: to +-inf, except towards zero (TRUNC, ODD) and away from the overflow side.
inline double overflow(double v, double maxv, RoundMode m) {
  if (kIs310P || (v <= maxv && v >= -maxv)) return sat(v, maxv);
  const bool pos = v > 0;
  const bool to_max = m == RoundMode::CAST_TRUNC || m == RoundMode::CAST_ODD ||
                      (pos && m == RoundMode::CAST_FLOOR) || (!pos && m == RoundMode::CAST_CEIL);
  if (to_max) return pos ? maxv : -maxv;
  return pos ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

inline float round_integral(float x, RoundMode m) {
  switch (m) {
    case RoundMode::CAST_FLOOR: return hm::floor(x);
    case RoundMode::CAST_CEIL: return hm::ceil(x);
    case RoundMode::CAST_TRUNC: return hm::trunc(x);
    case RoundMode::CAST_ROUND: return hm::round(x);
    default: return hm::nearbyint(x);
  }
}

template <class I>
inline I to_int_sat(float x, RoundMode m) {
  if (hm::isnan(x)) return 0;
  double r = round_integral(x, m);
  if (r >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (r <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(r);
}

// Fast paths (the ones a normalisation kernel runs per element).
template <class S>
OPKIT_EMU_HOT void cast_to_float_loop_generic(float* d, const S* s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = to_f(s[i]);
}

#ifdef OPKIT_EMU_F16C
// x86 F16C conversions (IEEE, round to nearest even), chosen at run time when the host has them.
// They give the same bits as the portable code for every input except signalling NaNs, which
// F16C returns quieted.
inline bool host_has_f16c() {
  static const bool ok = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return ok;
}
OPKIT_EMU_RT_NOINLINE_DECL(__attribute__((target("avx,f16c"))) OPKIT_EMU_RT void h2f_f16c(
    float* d, const half* s, uint32_t n))
#if OPKIT_EMU_RT_DEFS
__attribute__((target("avx,f16c"), noinline)) OPKIT_EMU_RT void h2f_f16c(float* d, const half* s, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = half_bits_to_float(s[i].bits_);
}
#endif
OPKIT_EMU_RT_NOINLINE_DECL(__attribute__((target("avx,f16c"))) OPKIT_EMU_RT void f2h_f16c(
    half* d, const float* s, uint32_t n))
#if OPKIT_EMU_RT_DEFS
__attribute__((target("avx,f16c"), noinline)) OPKIT_EMU_RT void f2h_f16c(half* d, const float* s, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i].bits_ = float_to_half_bits(s[i]);
}
#endif
#endif

template <class S>
inline void cast_to_float_loop(float* d, const S* s, uint32_t n) {
#ifdef OPKIT_EMU_F16C
  if constexpr (is_half_v<S>) {
    if (host_has_f16c()) return h2f_f16c(d, s, n);
  }
#endif
  cast_to_float_loop_generic<S>(d, s, n);
}
// 310P: finite values that round to inf saturate to the largest finite value instead (saturation mode).
// Written as arithmetic (inf bits minus one) rather than a select so that the loop vectorises.
OPKIT_EMU_RT_NOINLINE_DECL(OPKIT_EMU_RT void saturate_half_loop(half* d, const float* s, uint32_t n))
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_HOT OPKIT_EMU_RT void saturate_half_loop(half* d, const float* s, uint32_t n) {
  if constexpr (!kIs310P) return;   // A2: Inf/NaN mode, RNE overflow is +-inf
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t h = d[i].bits_;
    const uint32_t a = f32_bits(s[i]) & 0x7fffffffu;
    const uint32_t ovf = static_cast<uint32_t>((h & 0x7fffu) == 0x7c00u) & static_cast<uint32_t>(a != 0x7f800000u);
    d[i].bits_ = static_cast<uint16_t>(h - ovf);
  }
}
#endif
OPKIT_EMU_RT_NOINLINE_DECL(OPKIT_EMU_RT void cast_f2h_rint_loop_generic(half* d, const float* s, uint32_t n))
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_HOT OPKIT_EMU_RT void cast_f2h_rint_loop_generic(half* d, const float* s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t h = float_to_half_bits(s[i]);
    const uint32_t a = f32_bits(s[i]) & 0x7fffffffu;
    const uint32_t ovf = static_cast<uint32_t>(kIs310P) & static_cast<uint32_t>((h & 0x7fffu) == 0x7c00u) &
                         static_cast<uint32_t>(a != 0x7f800000u);
    d[i].bits_ = static_cast<uint16_t>(h - ovf);  // 0x7c00 -> 0x7bff (65504), sign kept
  }
}
#endif
inline void cast_f2h_rint_loop(half* d, const float* s, uint32_t n) {
#ifdef OPKIT_EMU_F16C
  if (host_has_f16c()) {
    f2h_f16c(d, s, n);
    return saturate_half_loop(d, s, n);
  }
#endif
  cast_f2h_rint_loop_generic(d, s, n);
}
OPKIT_EMU_RT_NOINLINE_DECL(OPKIT_EMU_RT void cast_f2bf_rint_loop(bfloat16_t* d, const float* s, uint32_t n))
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_HOT OPKIT_EMU_RT void cast_f2bf_rint_loop(bfloat16_t* d, const float* s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t h = float_to_bf16_bits(s[i]);
    const uint32_t a = f32_bits(s[i]) & 0x7fffffffu;
    const uint32_t ovf = static_cast<uint32_t>(kIs310P) & static_cast<uint32_t>((h & 0x7fffu) == 0x7f80u) &
                         static_cast<uint32_t>(a != 0x7f800000u);
    d[i].bits_ = static_cast<uint16_t>(h - ovf);  // 0x7f80 -> 0x7f7f (max finite bf16)
  }
}
#endif

template <class D, class S>
OPKIT_EMU_HOT void cast_generic_loop(D* d, const S* s, uint32_t n, RoundMode m) {
  for (uint32_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral<D>::value && std::is_integral<S>::value) {
      // integer narrowing saturates (the docs do not say; saturation is the conservative reading)
      const int64_t v = static_cast<int64_t>(s[i]);
      d[i] = static_cast<D>(std::min<int64_t>(std::max<int64_t>(v, std::numeric_limits<D>::min()),
                                              std::numeric_limits<D>::max()));
    } else if constexpr (is_half_v<D> && std::is_same<S, int32_t>::value) {
      // int32 -> half is a dequantisation: src x the SetDeqScale scale, rounded to nearest even
      const double x = static_cast<double>(s[i]) * ctx().deq_scale;
      d[i] = from_f<half>(static_cast<float>(overflow(round_to_format(x, 11, -14, RoundMode::CAST_RINT), 65504.0,
                                                      RoundMode::CAST_RINT)));
    } else if constexpr (is_half_v<D> && std::is_integral<S>::value) {
      const double x = static_cast<double>(s[i]);
      d[i] = from_f<half>(static_cast<float>(overflow(round_to_format(x, 11, -14, m), 65504.0, m)));
    } else if constexpr (is_half_v<D>) {
      float x = to_f(s[i]);
      d[i] = hm::isfinite(x) ? from_f<half>(static_cast<float>(overflow(round_to_format(x, 11, -14, m), 65504.0, m))) : from_f<half>(x);
    } else if constexpr (is_bf16_v<D>) {
      float x = to_f(s[i]);
      d[i] = hm::isfinite(x) ? from_f<bfloat16_t>(static_cast<float>(overflow(round_to_format(x, 8, -126, m), 3.3895313892515355e38, m)))
                              : from_f<bfloat16_t>(x);
    } else if constexpr (std::is_same<D, float>::value && std::is_integral<S>::value) {
      d[i] = static_cast<float>(round_to_format(static_cast<double>(s[i]), 24, -126, m));
    } else if constexpr (std::is_same<D, float>::value) {
      d[i] = round_integral(to_f(s[i]), m);
    } else {
      d[i] = to_int_sat<D>(to_f(s[i]), m);
    }
  }
}

template <class D, class S>
inline void check_cast_mode(RoundMode mode, SrcLoc loc) {
  if (!(cast_modes<D, S>() & M(mode)))
    fail("dtype-unsupported", "Cast", loc,
         strf("RoundMode %s is not supported for Cast %s -> %s on %s", mode_name(mode), type_name<S>(), type_name<D>(),
              kChip.profile));
}

// Converts n values with the table's conversion for (D, S, mode): the fast paths, else the generic loop.
template <class D, class S>
inline void cast_values(D* d, const S* s, uint32_t n, RoundMode mode) {
  const bool rint = mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE;
  if constexpr (std::is_same<D, float>::value && is_fp16_like<S>::value) {
    cast_to_float_loop<S>(d, s, n);
  } else if constexpr (std::is_same<D, half>::value && std::is_same<S, float>::value) {
    if (rint) cast_f2h_rint_loop(d, s, n);
    else cast_generic_loop<D, S>(d, s, n, mode);
  } else if constexpr (std::is_same<D, bfloat16_t>::value && std::is_same<S, float>::value) {
    if (rint) cast_f2bf_rint_loop(d, s, n);
    else cast_generic_loop<D, S>(d, s, n, mode);
  } else if constexpr (std::is_same<D, float>::value && std::is_same<S, int32_t>::value) {
    if (rint) { for (uint32_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]); }
    else cast_generic_loop<D, S>(d, s, n, mode);
  } else {
    cast_generic_loop<D, S>(d, s, n, mode);
  }
}

// half -> int4b_t: rounded as the mode says (NONE as RINT, as for half -> int8_t), saturated to [-8, 7] (CANN's
// cast sample golden, examples/01_simd_cpp_api/03_basic_api/01_memory_vector_compute/cast/scripts/gen_data.py:60-63:
// np.clip(ceil(x), -8, 7)); NaN gives 0 as for the other integer destinations here. int4b_t -> half is exact.
inline int4b_t half_to_int4(half v, RoundMode m) {
  const int8_t i = to_int_sat<int8_t>(to_f(v), m);
  return int4b_t(int32_t(i < -8 ? -8 : (i > 7 ? 7 : i)));
}
// Count form with an int4b_t side: `count` elements; the int4b_t operand is (count + 1) / 2 bytes, element 2k in the
// low nibble (tensor.h). An odd count writes the low nibble of the last byte and keeps its high nibble: the emulator's
// choice -- CANN runs it as vconv in counter mode (kernel_operator_vec_vconv_impl.h:1000-1012) and says nothing of the
// other nibble; the byte stays poison if it was (below), so a kernel relying on it is flagged when it was unwritten.
template <class D, class S>
void cast_int4_impl(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RoundMode mode,
                    uint32_t count, SrcLoc loc) {
  if (!vec_prologue<half>(VecOp::Cast, "Cast", count, loc)) return;
  const uint32_t nb = (count + 1) / 2;
  ApiCall c(Pipe::V, "Cast", loc);
  if constexpr (is_int4_v<D>) c.write(dst.m_, 0, nb, 8, "dst").src(src, count);
  else c.dst(dst, count).read(src.m_, 0, nb, 8, "src");
  // Poison per element, as vconv is element-wise: an int4b_t dst byte is poison if either of its source lanes is;
  // a half dst lane if its source byte is (a byte cannot tell its nibbles apart).
  const bool bad = c.commit(Flow::Manual);
  const uint32_t doff = dst.m_.ub_off();
  const Operand& so = c.operand(1);
  if constexpr (is_int4_v<D>) {
    // an odd count writes the last byte's low nibble only: the byte stays poison if it was (byte-grained shadow)
    const bool last_was = !(count % 2) || shadow_first_hole(doff + nb - 1, 1) < 0;
    if (!bad) shadow_fill(doff, nb, true);
    else
      for (uint32_t k = 0; k < nb; ++k)
        shadow_fill(doff + k, 1, !ApiCall::lane_poisoned(so, 2 * k) &&
                                     (2 * k + 1 >= count || !ApiCall::lane_poisoned(so, 2 * k + 1)));
    if (!last_was) shadow_clear(doff + nb - 1, 1);
  } else {
    if (!bad) shadow_fill(doff, count * 2, true);
    else
      for (uint32_t i = 0; i < count; ++i) shadow_fill(doff + 2 * i, 2, !ApiCall::lane_poisoned(so, i / 2));
  }
  for (uint32_t i = 0; i < count; ++i) {
    if constexpr (is_int4_v<D>) dst.m_.addr[i / 2] = nibble_set(dst.m_.addr[i / 2], i, half_to_int4(src.data()[i], mode));
    else dst.data()[i] = from_f<half>(static_cast<float>(int8_t(nibble_get(src.m_.addr[i / 2], i))));
  }
}

template <class D, class S>
void cast_impl(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RoundMode mode, uint32_t count,
               SrcLoc loc) {
  check_cast_mode<D, S>(mode, loc);
  if constexpr (is_int4_v<D> || is_int4_v<S>) {
    cast_int4_impl<D, S>(dst, src, mode, count, loc);
  } else {
    using Big = std::conditional_t<(sizeof(D) > sizeof(S)), D, S>;
    if (!vec_prologue<Big>(VecOp::Cast, "Cast", count, loc)) return;
    ApiCall(Pipe::V, "Cast", loc).dst(dst, count).src(src, count).commit();
    cast_values<D, S>(dst.data(), src.data(), count, mode);
  }
}

}  // namespace opkit_emu

namespace AscendC {

// Scale of the int32_t -> half Cast (SetDeqScale.md: "dst = src x scale"), per block.
inline void SetDeqScale(half scale) { opkit_emu::ctx().deq_scale = static_cast<float>(scale); }

template <class T, class U>
__attribute__((always_inline)) inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                                                const RoundMode& roundMode, const uint32_t count, OPKIT_LOC) {
  static_assert(opkit_emu::cast_modes<T, U>() != 0,
                "opkit emulator: Cast between these element types does not exist on this chip (see the Cast table "
                "in docs/emulator.md; ascend310p has no bfloat16_t at all)");
  // An unsupported RoundMode is refused when the Cast runs (check_cast_mode), not when it compiles: CANN's
  // compiler builds such a call and its CPU-debug library asserts only on execution (asc-devkit@82b89a15
  // impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h:142-148, :590-599), and CANN kernels carry such calls
  // on paths their A2 tiling never selects (ops-nn norm/rms_norm rms_norm_whole_reduce_sum.h:203, a float ->
  // bfloat16_t CAST_NONE reached only by 910A tiling keys 1030/1130, rms_norm_tiling.cpp:319,357,496-500).
  opkit_emu::cast_impl<T, U>(dst, src, roundMode, count, loc);
}

}  // namespace AscendC
