// The emulator's element loops under its NaN rule (opkit_emu/nan_rule.h), compiled by test_nan_rule.py at -O2 and
// at an ISA level. Each probe runs one loop on two float arrays and returns the result's bits; the arrays are
// 64 long so the loops take their vector bodies, not only the scalar tails.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>

#include "kernel_operator.h"
#include "opkit_emu/fused.h"
#include "opkit_emu/reduce.h"
#include "tikicpulib.h"
#include "float_bits.h"

using namespace opkit_emu;

constexpr uint32_t N = 64;

// The loop Op over x (src0) and y (src1) in the aliasing form `form`, element 0 printed.
template <class Op>
static uint32_t bin(uint32_t xb, uint32_t yb, const char* form) {
  alignas(64) float x[N], y[N], d[N];
  for (uint32_t i = 0; i < N; ++i) x[i] = from_bits(xb), y[i] = from_bits(yb), d[i] = 0.0f;
  if (!std::strcmp(form, "distinct")) bin_loop<Op, float>(d, x, y, N);
  else if (!std::strcmp(form, "dst_is_a")) bin_loop<Op, float>(x, x, y, N), std::memcpy(d, x, sizeof d);
  else bin_loop<Op, float>(y, x, y, N), std::memcpy(d, y, sizeof d);  // dst_is_b
  for (uint32_t i = 1; i < N; ++i)
    if (bits(d[i]) != bits(d[0])) return 1;  // lanes disagree: not a NaN bit pattern the test expects
  return bits(d[0]);
}
template <class Op>
static uint32_t scal(uint32_t xb, uint32_t sb, bool inplace) {
  alignas(64) float x[N], d[N];
  for (uint32_t i = 0; i < N; ++i) x[i] = from_bits(xb), d[i] = 0.0f;
  if (inplace) scalar_loop<Op, float>(x, x, from_bits(sb), N), std::memcpy(d, x, sizeof d);
  else scalar_loop<Op, float>(d, x, from_bits(sb), N);
  for (uint32_t i = 1; i < N; ++i)
    if (bits(d[i]) != bits(d[0])) return 1;
  return bits(d[0]);
}
// Muls by a literal -1 (the scalar a compile-time constant: the plain loop must not fold x * -1 into -x).
static uint32_t muls_neg1(uint32_t xb) {
  alignas(64) float x[N], d[N];
  for (uint32_t i = 0; i < N; ++i) x[i] = from_bits(xb), d[i] = 0.0f;
  scalar_loop<OpMul, float>(d, x, -1.0f, N);
  for (uint32_t i = 1; i < N; ++i)
    if (bits(d[i]) != bits(d[0])) return 1;
  return bits(d[0]);
}
// The API forms in a kernel (the rule through the fused forms' and the level-0 forms' own lambdas): x is src0 (or
// Axpy's src), y src1 (Axpy's and Adds' scalar is y[0]), dst starts at 0 (every lane a full 64-lane repeat).
static int g_api;  // 0 Axpy, 1 MulAddDst, 2 level-0 Add, 3 level-0 Adds
extern "C" __global__ __aicore__ void api_k(GM_ADDR x, GM_ADDR y, GM_ADDR d) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> bx, by, bd;
  pipe.InitBuffer(bx, N * 4), pipe.InitBuffer(by, N * 4), pipe.InitBuffer(bd, N * 4);
  AscendC::LocalTensor<float> lx = bx.Get<float>(), ly = by.Get<float>(), ld = bd.Get<float>();
  AscendC::GlobalTensor<float> gx, gy, gd;
  gx.SetGlobalBuffer((__gm__ float*)x, N), gy.SetGlobalBuffer((__gm__ float*)y, N);
  gd.SetGlobalBuffer((__gm__ float*)d, N);
  AscendC::DataCopy(lx, gx, N), AscendC::DataCopy(ly, gy, N), AscendC::DataCopy(ld, gd, N);
  AscendC::PipeBarrier<PIPE_ALL>();
  const float s = gy.GetValue(0);
  if (g_api == 0) AscendC::Axpy(ld, lx, s, N);
  else if (g_api == 1) AscendC::MulAddDst(ld, lx, ly, N);
  else if (g_api == 2) AscendC::Add(ld, lx, ly, N, 1, {1, 1, 1, 8, 8, 8});
  else AscendC::Adds(ld, lx, s, N, 1, {1, 1, 8, 8});
  AscendC::PipeBarrier<PIPE_ALL>();
  AscendC::DataCopy(gd, ld, N);
}
static uint32_t api(int which, uint32_t xb, uint32_t yb) {
  auto* x = (float*)AscendC::GmAlloc(N * 4);
  auto* y = (float*)AscendC::GmAlloc(N * 4);
  auto* d = (float*)AscendC::GmAlloc(N * 4);
  for (uint32_t i = 0; i < N; ++i) x[i] = from_bits(xb), y[i] = from_bits(yb), d[i] = 0.0f;
  g_api = which;
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(api_k, 1, (uint8_t*)x, (uint8_t*)y, (uint8_t*)d);
  uint32_t r = bits(d[0]);
  for (uint32_t i = 1; i < N; ++i)
    if (bits(d[i]) != r) r = 1;
  AscendC::GmFree(x), AscendC::GmFree(y), AscendC::GmFree(d);
  return r;
}
// ReduceSum's loop over n floats: element 0 is a, element k is b, the rest 0 (k < 64: inside one repeat's tree;
// k >= 64: the repeats' sequential sum).
static uint32_t rsum(uint32_t ab, uint32_t bb, uint32_t k, uint32_t n) {
  float v[256] = {};
  v[0] = from_bits(ab), v[k] = from_bits(bb);
  return bits(reduce_sum_loop<float>(v, n));
}

// stdin: one probe a line, "op form a b" (a, b: float bits in hex); stdout: the result's bits in hex.
int main() {
  char op[16], form[16];
  unsigned a, b;
  while (std::scanf("%15s %15s %x %x", op, form, &a, &b) == 4) {
    const bool sc = !std::strcmp(form, "scalar") || !std::strcmp(form, "scalar_inplace");
    const bool inp = !std::strcmp(form, "scalar_inplace");
    uint32_t r;
    if (!std::strcmp(op, "Add")) r = sc ? scal<OpAdd>(a, b, inp) : bin<OpAdd>(a, b, form);
    else if (!std::strcmp(op, "Sub")) r = bin<OpSub>(a, b, form);
    else if (!std::strcmp(op, "Mul")) r = sc ? scal<OpMul>(a, b, inp) : bin<OpMul>(a, b, form);
    else if (!std::strcmp(op, "Div")) r = bin<OpDiv>(a, b, form);
    else if (!std::strcmp(op, "Max")) r = sc ? scal<OpMax>(a, b, inp) : bin<OpMax>(a, b, form);
    else if (!std::strcmp(op, "Min")) r = sc ? scal<OpMin>(a, b, inp) : bin<OpMin>(a, b, form);
    else if (!std::strcmp(op, "MulsNeg1")) r = muls_neg1(a);
    else if (!std::strcmp(op, "Axpy")) r = api(0, a, b);
    else if (!std::strcmp(op, "MulAddDst")) r = api(1, a, b);
    else if (!std::strcmp(op, "Add0")) r = api(2, a, b);
    else if (!std::strcmp(op, "Adds0")) r = api(3, a, b);
    else if (!std::strcmp(op, "ReduceSum")) r = rsum(a, b, !std::strcmp(form, "tree") ? 1 : 64, 128);
    else return 2;
    std::printf("%08x\n", r);
  }
  return 0;
}
