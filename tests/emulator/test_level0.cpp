// Level-0 vector forms (mask / repeatTime / BinaryRepeatParams / UnaryRepeatParams, the mask register in
// Normal and Counter mode) and the level-0 reductions WholeReduce*/BlockReduce*/PairReduceSum/Brcb.
// Doc pages: see python/opkit/emulator/include/opkit_emu/level0.h and reduce_level0.h; test_level0.py holds
// the numpy reference written from the same pages.
#include "opkit_emu/pybind.h"

using namespace AscendC;

enum L0Op : int32_t {
  kAdd, kSub, kMul, kDiv, kMax, kMin, kAdds, kMuls, kMaxs, kMins, kExp, kAbs, kSqrt, kRelu, kLeaky, kDup,
  kWSum, kWMax, kWMin, kBSum, kBMax, kBMin, kPSum, kBrcb
};
// How the mask reaches the instruction: 0 continuous argument, 1 bit-array argument, 2 SetVectorMask
// (Normal) + isSetMask=false, 3 Counter mode (SetMaskCount, mask = element count) + isSetMask=true,
// 4 Counter mode + SetVectorMask + isSetMask=false.
struct L0Tiling {
  int32_t op, how;
  uint64_t lo, hi;
  int32_t repeat, order;
  int32_t dblk, s0blk, s1blk, drep, s0rep, s1rep;
  float scalar;
  uint32_t n;  // elements in each GM buffer
};

template <class T>
__aicore__ void l0_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(L0Tiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bo;
  pipe.InitBuffer(ba, t.n * sizeof(T));
  pipe.InitBuffer(bb, t.n * sizeof(T));
  pipe.InitBuffer(bo, t.n * sizeof(T));
  GlobalTensor<T> ga, gb, go;
  ga.SetGlobalBuffer((__gm__ T*)a, t.n);
  gb.SetGlobalBuffer((__gm__ T*)b, t.n);
  go.SetGlobalBuffer((__gm__ T*)out, t.n);
  LocalTensor<T> x = ba.Get<T>(), y = bb.Get<T>(), z = bo.Get<T>();
  DataCopy(x, ga, t.n);
  DataCopy(y, gb, t.n);
  DataCopy(z, go, t.n);  // dst starts with the caller's sentinel: masked-off lanes must keep it
  PipeBarrier<PIPE_ALL>();  // MTE2 -> V
  const T s = static_cast<T>(t.scalar);
  const BinaryRepeatParams bp(t.dblk, t.s0blk, t.s1blk, t.drep, t.s0rep, t.s1rep);
  const UnaryRepeatParams up(t.dblk, t.s0blk, t.drep, t.s0rep);
  const uint64_t bits[2] = {t.lo, t.hi};
  const uint8_t rep = static_cast<uint8_t>(t.repeat);
  const ReduceOrder ord = static_cast<ReduceOrder>(t.order);
  if (t.how >= 3) SetMaskCount();
  if (t.how == 2) SetVectorMask<T, MaskMode::NORMAL>(t.hi, t.lo);
  if (t.how == 4) SetVectorMask<T, MaskMode::COUNTER>(0, t.lo);
#define L0_CALL(EXPR_SET, EXPR_BITS, EXPR_REG)          \
  if (t.how == 1) { EXPR_BITS; }                        \
  else if (t.how == 2 || t.how == 4) { EXPR_REG; }      \
  else { EXPR_SET; }
  switch (t.op) {
#define B(K, NAME)                                                                                     \
  case K:                                                                                              \
    if constexpr (opkit_emu::is_arith_t<T>) {                                                          \
      L0_CALL(NAME(z, x, y, t.lo, rep, bp), NAME(z, x, y, bits, rep, bp),                              \
              (NAME<T, false>(z, x, y, MASK_PLACEHOLDER, rep, bp)))                                    \
    }                                                                                                  \
    break;
    B(kAdd, Add) B(kSub, Sub) B(kMul, Mul) B(kMax, Max) B(kMin, Min)
#undef B
    case kDiv:
      if constexpr (opkit_emu::is_fmath_t<T>) { L0_CALL(Div(z, x, y, t.lo, rep, bp), Div(z, x, y, bits, rep, bp), (Div<T, false>(z, x, y, MASK_PLACEHOLDER, rep, bp))) }
      break;
#define S(K, NAME)                                                                                     \
  case K:                                                                                              \
    if constexpr (opkit_emu::is_arith_t<T>) {                                                          \
      L0_CALL(NAME(z, x, s, t.lo, rep, up), NAME(z, x, s, bits, rep, up),                              \
              (NAME<T, false>(z, x, s, MASK_PLACEHOLDER, rep, up)))                                    \
    }                                                                                                  \
    break;
    S(kAdds, Adds) S(kMuls, Muls) S(kMaxs, Maxs) S(kMins, Mins)
#undef S
#define U(K, NAME, PRED)                                                                               \
  case K:                                                                                              \
    if constexpr (opkit_emu::PRED<T>) {                                                                \
      L0_CALL(NAME(z, x, t.lo, rep, up), NAME(z, x, bits, rep, up), (NAME<T, false>(z, x, MASK_PLACEHOLDER, rep, up))) \
    }                                                                                                  \
    break;
    U(kExp, Exp, is_fmath_t) U(kAbs, Abs, is_fmath_t) U(kSqrt, Sqrt, is_fmath_t) U(kRelu, Relu, is_relu_t)
#undef U
    case kLeaky:
      if constexpr (opkit_emu::is_fmath_t<T>) { L0_CALL(LeakyRelu(z, x, s, t.lo, rep, up), LeakyRelu(z, x, s, bits, rep, up), (LeakyRelu<T, false>(z, x, s, MASK_PLACEHOLDER, rep, up))) }
      break;
    case kDup:
      L0_CALL(Duplicate(z, s, t.lo, rep, t.dblk, t.drep), Duplicate(z, s, bits, rep, t.dblk, t.drep),
              (Duplicate<T, false>(z, s, MASK_PLACEHOLDER, rep, t.dblk, t.drep)))
      break;
    case kWSum:
      if constexpr (opkit_emu::is_red0_t<T>) { L0_CALL(WholeReduceSum(z, x, (int32_t)t.lo, t.repeat, t.drep, t.s0blk, t.s0rep), WholeReduceSum(z, x, bits, t.repeat, t.drep, t.s0blk, t.s0rep), (WholeReduceSum<T, false>(z, x, (int32_t)MASK_PLACEHOLDER, t.repeat, t.drep, t.s0blk, t.s0rep))) }
      break;
    case kWMax:
      if constexpr (opkit_emu::is_red0_t<T>) { L0_CALL(WholeReduceMax(z, x, (int32_t)t.lo, t.repeat, t.drep, t.s0blk, t.s0rep, ord), WholeReduceMax(z, x, bits, t.repeat, t.drep, t.s0blk, t.s0rep, ord), (WholeReduceMax<T, false>(z, x, (int32_t)MASK_PLACEHOLDER, t.repeat, t.drep, t.s0blk, t.s0rep, ord))) }
      break;
    case kWMin:
      if constexpr (opkit_emu::is_red0_t<T>) { L0_CALL(WholeReduceMin(z, x, (int32_t)t.lo, t.repeat, t.drep, t.s0blk, t.s0rep, ord), WholeReduceMin(z, x, bits, t.repeat, t.drep, t.s0blk, t.s0rep, ord), (WholeReduceMin<T, false>(z, x, (int32_t)MASK_PLACEHOLDER, t.repeat, t.drep, t.s0blk, t.s0rep, ord))) }
      break;
#define G(K, NAME)                                                                                     \
  case K:                                                                                              \
    if constexpr (opkit_emu::is_red0_t<T>) {                                                           \
      L0_CALL(NAME(z, x, t.repeat, (int32_t)t.lo, t.drep, t.s0blk, t.s0rep),                           \
              NAME(z, x, t.repeat, bits, t.drep, t.s0blk, t.s0rep),                                    \
              (NAME<T, false>(z, x, t.repeat, (int32_t)MASK_PLACEHOLDER, t.drep, t.s0blk, t.s0rep)))   \
    }                                                                                                  \
    break;
    G(kBSum, BlockReduceSum) G(kBMax, BlockReduceMax) G(kBMin, BlockReduceMin) G(kPSum, PairReduceSum)
#undef G
    case kBrcb:
      Brcb(z, x, rep, BrcbRepeatParams(t.dblk, t.drep));
      break;
    default: break;
  }
#undef L0_CALL
  if (t.how >= 3) { SetMaskNorm(); ResetMask(); }
  PipeBarrier<PIPE_ALL>();  // V -> MTE3
  DataCopy(go, z, t.n);
}

extern "C" __global__ __aicore__ void l0_f32(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { l0_kernel<float>(a, b, o, t); }
extern "C" __global__ __aicore__ void l0_f16(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { l0_kernel<half>(a, b, o, t); }
extern "C" __global__ __aicore__ void l0_i32(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { l0_kernel<int32_t>(a, b, o, t); }
extern "C" __global__ __aicore__ void l0_i16(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { l0_kernel<int16_t>(a, b, o, t); }

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, l0_f32, 4);
  OPKIT_EMU_PY_KERNEL(m, l0_f16, 4);
  OPKIT_EMU_PY_KERNEL(m, l0_i32, 4);
  OPKIT_EMU_PY_KERNEL(m, l0_i16, 4);
}
