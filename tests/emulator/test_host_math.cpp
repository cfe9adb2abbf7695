// opkit_emu/host_math.h against the C library, bit for bit: the double functions it writes out (floor, ceil,
// trunc, round, nearbyint, ldexp, frexp) on edge cases and a spread of random doubles, and the float ones
// (builtins) on random floats. Prints the number of mismatches and the first few; exit status = mismatches > 0.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

#include "opkit_emu/host_math.h"

namespace hm = opkit_emu::hm;
static long bad = 0;

static uint64_t bits(double x) { uint64_t b; std::memcpy(&b, &x, 8); return b; }
static uint32_t bits(float x) { uint32_t b; std::memcpy(&b, &x, 4); return b; }

template <class T>
static void check(const char* name, T x, T got, T want) {
  if (bits(got) == bits(want)) return;  // NaN too: sign and payload
  if (bad++ < 8) std::printf("%s(%a): %a, libm %a\n", name, (double)x, (double)got, (double)want);
}

static void doubles(double x) {
  check("floor", x, hm::floor(x), std::floor(x));
  check("ceil", x, hm::ceil(x), std::ceil(x));
  check("trunc", x, hm::trunc(x), std::trunc(x));
  check("round", x, hm::round(x), std::round(x));
  check("nearbyint", x, hm::nearbyint(x), std::nearbyint(x));
  int e1 = 0, e2 = 0;
  check("frexp", x, hm::frexp(x, &e1), std::frexp(x, &e2));
  if (std::isfinite(x) && e1 != e2 && bad++ < 8) std::printf("frexp(%a): exponent %d, libm %d\n", x, e1, e2);
  for (int e : {-2000, -1100, -160, -149, -24, -1, 0, 1, 10, 127, 1100, 2000}) {
    const double m = std::ldexp(x, e);  // only where the result is a normal double (host_math.h's contract)
    if (std::isnormal(m) || m == 0.0) check("ldexp", x, hm::ldexp(x, e), m);
  }
}

static void floats(float x) {
  check("expf", x, hm::exp(x), std::exp(x));
  check("logf", x, hm::log(x), std::log(x));
  check("sinf", x, hm::sin(x), std::sin(x));
  check("erff", x, hm::erf(x), std::erf(x));
  check("atanhf", x, hm::atanh(x), std::atanh(x));
  check("nearbyintf", x, hm::nearbyint(x), std::nearbyint(x));
  check("floorf", x, hm::floor(x), std::floor(x));
  check("powf", x, hm::pow(x, 0.37f), std::pow(x, 0.37f));
}

int main() {
  const double edge[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                         4503599627370495.5, -4503599627370495.5, 4503599627370496.0, 9007199254740993.0,
                         1e300, -1e300, 5e-324, -5e-324, 2.2250738585072014e-308, HUGE_VAL, -HUGE_VAL, NAN, -NAN,
                         0.9999999999999999, -0.9999999999999999, 3.0, -3.0, 65504.5, -65504.5};
  for (double x : edge) doubles(x);
  for (uint64_t nan : {0x7ff8000000000001ULL, 0xfff8000000000123ULL, 0x7ff0000000000001ULL, 0xfff4000000000000ULL}) {
    double x;  // quiet and signalling NaNs with payloads, both signs
    std::memcpy(&x, &nan, 8);
    doubles(x);
  }
  for (double x : {2.0, 1e-300, 0.0, -4.0}) check("sqrt", x, hm::sqrt(x), std::sqrt(x));
  std::mt19937_64 g(39);
  std::uniform_real_distribution<double> frac(-4.0, 4.0);
  std::uniform_int_distribution<int> ex(-60, 60);
  for (int i = 0; i < 2000000; ++i) {
    const double x = std::ldexp(frac(g), ex(g));
    doubles(x);
    doubles(std::nearbyint(x) + 0.5);  // the ties
  }
  std::uniform_real_distribution<float> f(-3.0f, 3.0f);
  for (int i = 0; i < 200000; ++i) floats(f(g));
  std::printf("mismatches %ld\n", bad);
  return bad != 0;
}
