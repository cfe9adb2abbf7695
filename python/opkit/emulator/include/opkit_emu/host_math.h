// The host math the emulator's kernel-facing headers use, without <cmath> / <math.h>.
// Why: those headers declare the C library's functions at global scope, and msopgen names a kernel's entry after
// its op in snake case (`extern "C" __global__ __aicore__ void erf(...)`, `atanh`, `sinh`, ...): with <cmath>
// in kernel_operator.h such a kernel stops on "conflicting declaration of C function". The device compiler
// gives the kernel no C library, so CANN developers' kernels with those names build there; here they build too.
// GCC's builtins are the same functions std:: calls (libstdc++'s <cmath> forwards std::exp(float) to
// __builtin_expf), so every result is bitwise what it was. A kernel that includes <cmath> itself gets it as usual.
#pragma once
// Such an entry still draws GCC's "conflicts with built-in declaration" warning for the name; the device compiler
// has no such built-in, so the warning says nothing about the kernel and is silenced for the translation unit.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wbuiltin-declaration-mismatch"
#endif

namespace opkit_emu::hm {
// float: GCC's builtin, i.e. the C library's float function (expf, sinf, ...). No kernel entry is named like those.
#define OPKIT_EMU_HM_FLOAT(name) \
  inline float name(float x) { return __builtin_##name##f(x); }
OPKIT_EMU_HM_FLOAT(exp)
OPKIT_EMU_HM_FLOAT(log)
OPKIT_EMU_HM_FLOAT(log2)
OPKIT_EMU_HM_FLOAT(log10)
OPKIT_EMU_HM_FLOAT(sqrt)
OPKIT_EMU_HM_FLOAT(sin)
OPKIT_EMU_HM_FLOAT(cos)
OPKIT_EMU_HM_FLOAT(tan)
OPKIT_EMU_HM_FLOAT(asin)
OPKIT_EMU_HM_FLOAT(acos)
OPKIT_EMU_HM_FLOAT(atan)
OPKIT_EMU_HM_FLOAT(sinh)
OPKIT_EMU_HM_FLOAT(cosh)
OPKIT_EMU_HM_FLOAT(tanh)
OPKIT_EMU_HM_FLOAT(asinh)
OPKIT_EMU_HM_FLOAT(acosh)
OPKIT_EMU_HM_FLOAT(atanh)
OPKIT_EMU_HM_FLOAT(erf)
OPKIT_EMU_HM_FLOAT(erfc)
OPKIT_EMU_HM_FLOAT(floor)
OPKIT_EMU_HM_FLOAT(ceil)
OPKIT_EMU_HM_FLOAT(trunc)
OPKIT_EMU_HM_FLOAT(round)
OPKIT_EMU_HM_FLOAT(nearbyint)
OPKIT_EMU_HM_FLOAT(fabs)
#undef OPKIT_EMU_HM_FLOAT
inline float pow(float x, float y) { return __builtin_powf(x, y); }
// No double exp, log, pow, ...: a double argument must not narrow to the float function silently.
double exp(double) = delete;
double log(double) = delete;
double log2(double) = delete;
double log10(double) = delete;
double sin(double) = delete;
double cos(double) = delete;
double tan(double) = delete;
double tanh(double) = delete;
double erf(double) = delete;
double pow(double, double) = delete;
inline double fabs(double x) { return __builtin_fabs(x); }  // a bit mask, no call
inline bool isnan(float x) { return __builtin_isnan(x); }
inline bool isnan(double x) { return __builtin_isnan(x); }
inline bool isfinite(float x) { return __builtin_isfinite(x); }
inline bool isfinite(double x) { return __builtin_isfinite(x); }
inline bool isinf(float x) { return __builtin_isinf(x); }
inline bool isinf(double x) { return __builtin_isinf(x); }
// sqrtsd itself: without errno GCC emits no fallback call to libm's `sqrt` (which an entry named sqrt would take).
__attribute__((optimize("no-math-errno"))) inline double sqrt(double x) { return __builtin_sqrt(x); }

// double: written out, exact, calling nothing. A kernel entry may carry a C double function's name (an op Round
// is `extern "C" ... round(...)`), and in the kernel's own program a call to libm's `round` would bind to it.
// Each equals what the std:: function gave at -O2 bit for bit, -0.0 and NaN payloads included: floor, ceil and
// trunc are GCC's inline expansions there (a signalling NaN comes back as it is), round and nearbyint libm's
// (tests/emulator/test_host_math.py). nearbyint assumes round-to-nearest, the only mode the emulator runs in.
inline constexpr double kTwo52 = 4503599627370496.0;  // from here on every double is an integer
inline double trunc(double x) {
  if (!(fabs(x) < kTwo52)) return x;  // integral, infinite or NaN (kept as it is, as GCC's inline trunc does)
  return __builtin_copysign(static_cast<double>(static_cast<long long>(x)), x);
}
inline double floor(double x) {
  const double t = trunc(x);
  return t > x ? t - 1.0 : t;
}
inline double ceil(double x) {
  const double t = trunc(x);
  return t < x ? t + 1.0 : t;
}
inline double round(double x) {  // half away from zero
  if (x != x) return x + x;  // NaN quieted, as libm's round
  const double t = trunc(x);
  return fabs(x - t) >= 0.5 ? t + __builtin_copysign(1.0, x) : t;
}
inline double nearbyint(double x) {  // half to even, by the FPU's own rounding of x + 2^52
  if (!(fabs(x) < kTwo52)) return x == x ? x : x + x;  // NaN quieted, as libm's nearbyint
  const double s = __builtin_copysign(kTwo52, x);
  return __builtin_copysign((x + s) - s, x);  // SSE / NEON doubles: x + s is rounded to double, no excess precision
}
// x * 2^e, exact while the result is a normal double or zero (the emulator's uses: ulps of float and half
// formats); a result in the subnormal range may round twice.
inline double ldexp(double x, int e) {
  e = e > 2200 ? 2200 : (e < -2200 ? -2200 : e);  // beyond, every finite x over- or underflows anyway
  while (e > 1000) { x *= 0x1p1000; e -= 1000; }
  while (e < -1000) { x *= 0x1p-1000; e += 1000; }
  return x * __builtin_bit_cast(double, static_cast<unsigned long long>(e + 1023) << 52);
}
// mantissa in [0.5, 1) and *e with x = m * 2^*e; 0, inf and NaN come back as they are with *e = 0.
inline double frexp(double x, int* e) {
  *e = 0;
  if (x == 0.0 || isinf(x)) return x;
  if (isnan(x)) return x + x;
  unsigned long long b = __builtin_bit_cast(unsigned long long, x);
  int bias = 0;
  if (((b >> 52) & 0x7ff) == 0) {  // subnormal: scale into the normal range first
    x *= 0x1p54;
    bias = -54;
    b = __builtin_bit_cast(unsigned long long, x);
  }
  *e = static_cast<int>((b >> 52) & 0x7ff) - 1022 + bias;
  return __builtin_bit_cast(double, (b & ~(0x7ffULL << 52)) | (1022ULL << 52));
}
}  // namespace opkit_emu::hm
