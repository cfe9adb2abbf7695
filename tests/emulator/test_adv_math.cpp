// The advanced API's math library (lib/math/*.h, opkit_emu/adv_math.h): every family in its CANN forms
// (sharedTmpBuffer with and without calCount, framework buffer with and without calCount), half and float, the
// minimum-sharedTmpBuffer rule, Power's three operand shapes and int32_t, Exp<T, taylorExpandLevel>, Axpy's buffer
// form, poison flowing lane by lane. test_adv_math.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "lib/math/sin.h"  // the CANN include paths resolve (kernel_operator.h already has every family)
#include "adv_api/math/power.h"

using namespace AscendC;

struct MathTiling {
  int32_t op;       // index into OPS below
  int32_t form;     // 0: (dst, src, tmp, calCount)  1: (dst, src, calCount)  2: (dst, src, tmp)  3: (dst, src)
  int32_t isHalf;   // compute in half (inputs cast from float, results cast back)
  uint32_t n;       // elements in the buffers (a multiple of 16)
  uint32_t cal;     // calCount (forms 0 and 1)
  uint32_t tmp;     // sharedTmpBuffer bytes
  float scalar;     // Power's scalar operand, Axpy's scalar
  int32_t poison;   // 1: the last 16 source elements are never written (poison)
};

// OPS: 0 Sin 1 Cos 2 Tan 3 Asin 4 Acos 5 Atan 6 Sinh 7 Cosh 8 Tanh 9 Asinh 10 Acosh 11 Atanh 12 Erf 13 Erfc
// 14 Trunc 15 Frac 16 Sign 17 Log2 18 Floor 19 Ceil 20 Round 21 Log 22 Log10 23 Exp 24 Power(t, t) 25 Power(t, s)
// 26 Power(s, t) 27 Axpy (with sharedTmpBuffer) 28 Sigmoid 29 Sin and 30 Sub through CANN's function-pointer types
#define MATH_FOUR(ID, NAME)                                  \
  case ID:                                                   \
    if (form == 0) NAME<T>(d, s, tmp, cal);                  \
    else if (form == 1) NAME<T>(d, s, cal);                  \
    else if (form == 2) NAME<T>(d, s, tmp);                  \
    else NAME<T>(d, s);                                      \
    break;
#define MATH_TWO(ID, NAME)                  \
  case ID:                                  \
    if (form == 0) NAME<T>(d, s, tmp, cal); \
    else NAME<T>(d, s, cal);                \
    break;

template <class T>
void run_op(const MathTiling& t, const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& s1,
            const LocalTensor<uint8_t>& tmp) {
  const int form = t.form;
  const uint32_t cal = t.cal;
  const T sc = static_cast<T>(t.scalar);
  switch (t.op) {
    MATH_FOUR(0, Sin) MATH_FOUR(1, Cos)  // MATH:four
    MATH_FOUR(2, Tan) MATH_FOUR(3, Asin) MATH_FOUR(4, Acos)
    MATH_FOUR(5, Atan) MATH_FOUR(6, Sinh) MATH_FOUR(7, Cosh) MATH_FOUR(8, Tanh) MATH_FOUR(9, Asinh)
    MATH_FOUR(10, Acosh) MATH_FOUR(11, Atanh) MATH_FOUR(12, Erf) MATH_FOUR(13, Erfc) MATH_FOUR(14, Trunc)
    MATH_FOUR(15, Frac) MATH_FOUR(16, Sign) MATH_FOUR(17, Log2) MATH_FOUR(28, Sigmoid)
    MATH_TWO(18, Floor) MATH_TWO(19, Ceil) MATH_TWO(20, Round)  // MATH:two
    case 21: if (form == 1) Log<T>(d, s, cal); else Log<T>(d, s); break;
    case 22: if (form == 1) Log10<T>(d, s, cal); else Log10<T>(d, s); break;
    case 23: if (form == 0) Exp<T, 15>(d, s, tmp, cal); else Exp<T, 15, false>(d, s, cal); break;  // MATH:exp
    case 24:
      if (form == 0) Power<T>(d, s, s1, tmp, cal);
      else if (form == 1) Power<T>(d, s, s1, cal);
      else if (form == 2) Power<T>(d, s, s1, tmp);
      else Power<T>(d, s, s1);
      break;
    case 25: if (form == 0) Power<T>(d, s, sc, tmp, cal); else Power<T>(d, s, sc, cal); break;
    case 26: if (form == 0) Power<T>(d, sc, s, tmp, cal); else Power<T>(d, sc, s, cal); break;
    case 27: Duplicate(d, static_cast<T>(1), static_cast<int32_t>(t.n)); Axpy<T, T>(d, s, sc, tmp, cal); break;
    case 29: {  // through a pointer of CANN's exact type, as ops-nn's foreach_triangle.h holds its op
      void (*f)(const LocalTensor<T>&, const LocalTensor<T>&, const uint32_t) = Sin<T, false>;
      f(d, s, cal);
      break;
    }
    case 30: {  // foreach_no_scalar_binary.h's NoScalarBinaryOp<T>* = Sub (the basic API's count form)
      void (*f)(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&) = Sub;
      f(d, s, s1, static_cast<int32_t>(cal));
      break;
    }
    default: break;
  }
}

// x, y: n float inputs; out: n float results
extern "C" __global__ __aicore__ void math_call(GM_ADDR x, GM_ADDR y, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(MathTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, by, bd, bt, bh0, bh1, bhd;
  const uint32_t n = t.n;
  pipe.InitBuffer(bx, n * 4);
  pipe.InitBuffer(by, n * 4);
  pipe.InitBuffer(bd, n * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(bh0, n * 2);
  pipe.InitBuffer(bh1, n * 2);
  pipe.InitBuffer(bhd, n * 2);
  GlobalTensor<float> gx, gy, go;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  gy.SetGlobalBuffer((__gm__ float*)y, n);
  go.SetGlobalBuffer((__gm__ float*)out, n);
  LocalTensor<float> fx = bx.Get<float>(), fy = by.Get<float>(), fd = bd.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, t.poison ? n - 16 : n);
  DataCopy(fy, gy, n);
  Duplicate(fd, 0.0f, static_cast<int32_t>(n));
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh0.Get<half>(), hy = bh1.Get<half>(), hd = bhd.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, t.poison ? n - 16 : n);
    Cast(hy, fy, RoundMode::CAST_NONE, n);
    Duplicate(hd, static_cast<half>(0), static_cast<int32_t>(n));
    run_op<half>(t, hd, hx, hy, tmp);
    Cast(fd, hd, RoundMode::CAST_NONE, n);
  } else if (t.op == 24 && t.scalar == 7.0f) {  // int32_t Power (tensor ^ tensor): the floats hold integers
    LocalTensor<int32_t> ix = bh0.Get<int32_t>(n / 2), iy = bh1.Get<int32_t>(n / 2), id = bhd.Get<int32_t>(n / 2);
    Cast(ix, fx[0], RoundMode::CAST_RINT, n / 2);
    Cast(iy, fy[0], RoundMode::CAST_RINT, n / 2);
    Power<int32_t>(id, ix, iy, tmp, n / 2);
    Cast(fd, id, RoundMode::CAST_NONE, n / 2);
  } else {
    run_op<float>(t, fd, fx, fy, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, fd, n);
}

// Arange / ArithProgression (lib/index/arithprogression.h): out receives 512 float slots as raw bytes; the tiling
// picks the type (0 float, 1 half, 2 int32_t, 3 int16_t), first, diff (as float) and count.
struct ArangeTiling {
  int32_t type, count;
  float first, diff;
  int32_t older;  // 1: the older name ArithProgression
};
template <class T>
void arange_into(const LocalTensor<T>& d, const ArangeTiling& t) {
  if (t.older) ArithProgression<T>(d, static_cast<T>(t.first), static_cast<T>(t.diff), t.count);
  else Arange<T>(d, static_cast<T>(t.first), static_cast<T>(t.diff), t.count);  // MATH:arange
}
extern "C" __global__ __aicore__ void arange_call(GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ArangeTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 2048);
  LocalTensor<uint8_t> raw = b.Get<uint8_t>();
  Duplicate(raw.ReinterpretCast<int32_t>(), 0, 512);
  PipeBarrier<PIPE_ALL>();
  if (t.type == 0) arange_into<float>(raw.ReinterpretCast<float>(), t);
  else if (t.type == 1) arange_into<half>(raw.ReinterpretCast<half>(), t);
  else if (t.type == 2) arange_into<int32_t>(raw.ReinterpretCast<int32_t>(), t);
  else arange_into<int16_t>(raw.ReinterpretCast<int16_t>(), t);
  PipeBarrier<PIPE_ALL>();
  GlobalTensor<uint8_t> go;
  go.SetGlobalBuffer((__gm__ uint8_t*)out, 2048);
  DataCopy(go, raw, 2048);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, math_call, 4);
  OPKIT_EMU_PY_KERNEL(m, arange_call, 2);
}
