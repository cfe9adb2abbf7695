// Vector compute (count forms): arithmetic, unary, scalar, LeakyRelu, Duplicate, operator overloads,
// ReduceSum/Max/Min, Compare/Select. Facts sheet §3.
#include "opkit_emu/pybind.h"

using namespace AscendC;
using opkit_emu::is_arith_t;
using opkit_emu::is_fmath_t;
using opkit_emu::is_relu_t;

// The test's opcodes: one list for the enum and for the Python side (py::enum_ "Op", test_vector.py checks
// its names against it).
#define VEC_TEST_OPS(X)                                                                                   \
  X(Add) X(Sub) X(Mul) X(Div) X(Max) X(Min) X(Adds) X(Muls) X(Maxs) X(Mins) X(Exp) X(Ln) X(Abs) X(Sqrt)   \
  X(Rsqrt) X(Reciprocal) X(Relu) X(LeakyRelu) X(Duplicate) X(ReduceSum) X(ReduceMax) X(ReduceMin) X(OpAdd) \
  X(OpSub) X(OpMul) X(OpDiv) X(InPlaceAdd)
enum Op : int32_t {
#define VEC_TEST_OP_ENUM(name) k##name,
  VEC_TEST_OPS(VEC_TEST_OP_ENUM)
#undef VEC_TEST_OP_ENUM
};

struct VecTiling {
  int32_t op;
  uint32_t count;
  float scalar;
  int32_t calIndex;
};

// Loads `count` elements of a and b (DataCopyPad), applies one op, stores `count` (or 2 for reductions).
template <class T>
__aicore__ void vec_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(VecTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bo, btmp;
  const uint32_t n = t.count;
  pipe.InitBuffer(ba, n * sizeof(T));
  pipe.InitBuffer(bb, n * sizeof(T));
  pipe.InitBuffer(bo, n * sizeof(T) < 32 ? 32 : n * sizeof(T));
  pipe.InitBuffer(btmp, 1024);
  GlobalTensor<T> ga, gb, go;
  ga.SetGlobalBuffer((__gm__ T*)a, n);
  gb.SetGlobalBuffer((__gm__ T*)b, n);
  go.SetGlobalBuffer((__gm__ T*)out, n < 2 ? 2 : n);
  LocalTensor<T> x = ba.Get<T>(n), y = bb.Get<T>(n), z = bo.Get<T>(), tmp = btmp.Get<T>();
  DataCopyExtParams p{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
  DataCopyPad(x, ga, p, DataCopyPadExtParams<T>{});
  DataCopyPad(y, gb, p, DataCopyPadExtParams<T>{});
  PipeBarrier<PIPE_ALL>();  // MTE2 -> V
  const T s = static_cast<T>(t.scalar);
  const int32_t c = static_cast<int32_t>(n);
  uint32_t out_n = n;
  switch (t.op) {
    case kAdd: if constexpr (is_arith_t<T>) Add(z, x, y, c); break;
    case kSub: if constexpr (is_arith_t<T>) Sub(z, x, y, c); break;
    case kMul: if constexpr (is_arith_t<T>) Mul(z, x, y, c); break;
    case kMax: if constexpr (is_arith_t<T>) Max(z, x, y, c); break;
    case kMin: if constexpr (is_arith_t<T>) Min(z, x, y, c); break;
    case kAdds: if constexpr (is_arith_t<T>) Adds(z, x, s, c); break;
    case kMuls: if constexpr (is_arith_t<T>) Muls(z, x, s, c); break;
    case kMaxs: if constexpr (is_arith_t<T>) Maxs(z, x, s, c); break;
    case kMins: if constexpr (is_arith_t<T>) Mins(z, x, s, c); break;
    case kDiv: if constexpr (is_fmath_t<T>) Div(z, x, y, c); break;
    case kExp: if constexpr (is_fmath_t<T>) Exp(z, x, c); break;
    case kLn: if constexpr (is_fmath_t<T>) Ln(z, x, c); break;
    case kAbs: if constexpr (is_fmath_t<T>) Abs(z, x, c); break;
    case kSqrt: if constexpr (is_fmath_t<T>) Sqrt(z, x, c); break;
    case kRsqrt: if constexpr (is_fmath_t<T>) Rsqrt(z, x, c); break;
    case kReciprocal: if constexpr (is_fmath_t<T>) Reciprocal(z, x, c); break;
    case kLeakyRelu: if constexpr (is_fmath_t<T>) LeakyRelu(z, x, s, c); break;
    case kRelu: if constexpr (is_relu_t<T>) Relu(z, x, c); break;
    case kDuplicate: Duplicate(z, s, c); break;
    case kReduceSum: if constexpr (is_fmath_t<T>) { ReduceSum(z, x, tmp, c); out_n = 1; } break;
    case kReduceMax: if constexpr (is_fmath_t<T>) { ReduceMax(z, x, tmp, c, t.calIndex != 0); out_n = t.calIndex ? 2 : 1; } break;
    case kReduceMin: if constexpr (is_fmath_t<T>) { ReduceMin(z, x, tmp, c, t.calIndex != 0); out_n = t.calIndex ? 2 : 1; } break;
    case kOpAdd: if constexpr (is_arith_t<T>) { LocalTensor<T> d = bo.Get<T>(n); d = x + y; } break;
    case kOpSub: if constexpr (is_arith_t<T>) { LocalTensor<T> d = bo.Get<T>(n); d = x - y; } break;
    case kOpMul: if constexpr (is_arith_t<T>) { LocalTensor<T> d = bo.Get<T>(n); d = x * y; } break;
    case kOpDiv: if constexpr (is_fmath_t<T>) { LocalTensor<T> d = bo.Get<T>(n); d = x / y; } break;
    case kInPlaceAdd: if constexpr (is_arith_t<T>) { Add(x, x, y, c); Adds(z, x, T(0), c); } break;
    default: break;
  }
  PipeBarrier<PIPE_ALL>();  // V -> MTE3
  DataCopyPad(go, z, DataCopyExtParams{1, (uint32_t)(out_n * sizeof(T)), 0, 0, 0});
}

struct CmpTiling {
  uint32_t count;
  int32_t cmpMode;
  int32_t selMode;
  float scalar;
};

// Compare(a, b) -> mask (stored), Select(mask, a, b | scalar) -> out.
template <class T>
__aicore__ void cmpsel_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR mask, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CmpTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bm, bo;
  const uint32_t n = t.count;
  pipe.InitBuffer(ba, n * sizeof(T));
  pipe.InitBuffer(bb, n * sizeof(T));
  pipe.InitBuffer(bm, n / 8 < 32 ? 32 : n / 8);
  pipe.InitBuffer(bo, n * sizeof(T));
  GlobalTensor<T> ga, gb, go;
  GlobalTensor<uint8_t> gm;
  ga.SetGlobalBuffer((__gm__ T*)a, n);
  gb.SetGlobalBuffer((__gm__ T*)b, n);
  go.SetGlobalBuffer((__gm__ T*)out, n);
  gm.SetGlobalBuffer((__gm__ uint8_t*)mask, n / 8);
  LocalTensor<T> x = ba.Get<T>(), y = bb.Get<T>(), z = bo.Get<T>();
  LocalTensor<uint8_t> mk = bm.Get<uint8_t>();
  DataCopyExtParams p{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
  DataCopyPad(x, ga, p, DataCopyPadExtParams<T>{});
  DataCopyPad(y, gb, p, DataCopyPadExtParams<T>{});
  PipeBarrier<PIPE_ALL>();
  Compare(mk, x, y, static_cast<CMPMODE>(t.cmpMode), n);
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(gm, mk, DataCopyExtParams{1, n / 8, 0, 0, 0});
  if constexpr (opkit_emu::is_sel_t<T>) {
    if (t.selMode == static_cast<int32_t>(SELMODE::VSEL_TENSOR_SCALAR_MODE))
      Select(z, mk, x, static_cast<T>(t.scalar), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    else
      Select(z, mk, x, y, static_cast<SELMODE>(t.selMode), n);
    PipeBarrier<PIPE_ALL>();
    DataCopyPad(go, z, p);
  }
}

extern "C" __global__ __aicore__ void vec_f32(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { vec_kernel<float>(a, b, o, t); }
extern "C" __global__ __aicore__ void vec_f16(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { vec_kernel<half>(a, b, o, t); }
extern "C" __global__ __aicore__ void vec_i32(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { vec_kernel<int32_t>(a, b, o, t); }
extern "C" __global__ __aicore__ void vec_i16(GM_ADDR a, GM_ADDR b, GM_ADDR o, GM_ADDR t) { vec_kernel<int16_t>(a, b, o, t); }
extern "C" __global__ __aicore__ void cmpsel_f32(GM_ADDR a, GM_ADDR b, GM_ADDR m, GM_ADDR o, GM_ADDR t) { cmpsel_kernel<float>(a, b, m, o, t); }
extern "C" __global__ __aicore__ void cmpsel_f16(GM_ADDR a, GM_ADDR b, GM_ADDR m, GM_ADDR o, GM_ADDR t) { cmpsel_kernel<half>(a, b, m, o, t); }
extern "C" __global__ __aicore__ void cmpsel_i32(GM_ADDR a, GM_ADDR b, GM_ADDR m, GM_ADDR o, GM_ADDR t) { cmpsel_kernel<int32_t>(a, b, m, o, t); }

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, vec_f32, 4);
  OPKIT_EMU_PY_KERNEL(m, vec_f16, 4);
  OPKIT_EMU_PY_KERNEL(m, vec_i32, 4);
  OPKIT_EMU_PY_KERNEL(m, vec_i16, 4);
  OPKIT_EMU_PY_KERNEL(m, cmpsel_f32, 5);
  OPKIT_EMU_PY_KERNEL(m, cmpsel_f16, 5);
  OPKIT_EMU_PY_KERNEL(m, cmpsel_i32, 5);
  pybind11::enum_<Op> ops(m, "Op");
#define VEC_TEST_OP_VALUE(name) ops.value(#name, k##name);
  VEC_TEST_OPS(VEC_TEST_OP_VALUE)
#undef VEC_TEST_OP_VALUE
}
