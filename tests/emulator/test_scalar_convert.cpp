// AscendC scalar helpers (opkit_emu/scalar_convert.h): IsSameType / SupportType / SupportBytes at compile time,
// ToFloat / ToBfloat16 over bit patterns given on the command line. Built as a CPU-debug program with
// `opkit cflags` by test_scalar_convert.py; prints one line per pattern: "<float bits> <ToBfloat16 bits>
// <ToFloat(ToBfloat16) bits>".
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernel_operator.h"

template <typename T>
__aicore__ inline float AsFloat(T v) {
  if constexpr (AscendC::IsSameType<T, bfloat16_t>::value) return AscendC::ToFloat(v);
  else return static_cast<float>(v);
}

static_assert(AscendC::IsSameType<half, half>::value && !AscendC::IsSameType<half, float>::value, "IsSameType");
static_assert(AscendC::SupportType<float, half, float>() && !AscendC::SupportType<int32_t, half, float>(), "SupportType");
static_assert(AscendC::SupportBytes<half, 2, 4>() && !AscendC::SupportBytes<int8_t, 2, 4>(), "SupportBytes");
static_assert(AscendC::TrueType::value && !AscendC::FalseType::value, "BoolInst");

int main(int argc, char** argv) {
  using namespace AscendC;
  for (int i = 1; i < argc; ++i) {
    const uint32_t u = static_cast<uint32_t>(std::strtoul(argv[i], nullptr, 16));
    float f;
    std::memcpy(&f, &u, 4);
    const bfloat16_t b = ToBfloat16(f);
    const float back = AsFloat(b);
    uint16_t bb;
    uint32_t ub;
    std::memcpy(&bb, &b, 2);
    std::memcpy(&ub, &back, 4);
    std::printf("%08x %04x %08x\n", u, bb, ub);
  }
  return AsFloat(half(1.5f)) == 1.5f ? 0 : 1;
}
