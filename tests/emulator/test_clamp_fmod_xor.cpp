// ClampMin / ClampMax, Fmod, Xor (lib/math/{clamp,fmod,xor}.h): every form CANN declares for A2, the minimum
// sharedTmpBuffer rule. test_clamp_fmod_xor.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "lib/math/clamp.h"  // CANN's include paths resolve (kernel_operator.h already has every family)
#include "adv_api/math/fmod.h"
#include "lib/math/kernel_operator_xor_intf.h"

using namespace AscendC;

struct CfxTiling {
  int32_t op;      // 0 ClampMin 1 ClampMax 2 Fmod 3 Xor (int16_t; x and y hold the values)
  int32_t form;    // 0: with sharedTmpBuffer and count  1: count  2: sharedTmpBuffer  3: neither
  int32_t isHalf;  // compute in half (inputs cast from float, results cast back)
  uint32_t n;      // elements in the buffers (a multiple of 16)
  uint32_t cal;    // count
  uint32_t tmp;    // sharedTmpBuffer bytes
  float scalar;    // Clamp's scalar
};

template <class T>
void run_op(const CfxTiling& t, const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& s1,
            const LocalTensor<uint8_t>& tmp) {
  const int form = t.form;
  const uint32_t cal = t.cal;
  const T sc = static_cast<T>(t.scalar);
  if (t.op == 0) {
    if (form == 0) ClampMin<T>(d, s, tmp, sc, cal);  // CFX:first
    else ClampMin<T>(d, s, sc, cal);
  } else if (t.op == 1) {
    if (form == 0) ClampMax<T>(d, s, tmp, sc, cal);
    else ClampMax<T>(d, s, sc, cal);
  } else if (t.op == 2) {
    if (form == 0) Fmod<T>(d, s, s1, tmp, cal);
    else if (form == 1) Fmod<T>(d, s, s1, cal);
    else if (form == 2) Fmod<T>(d, s, s1, tmp);
    else Fmod<T>(d, s, s1);
  }
}
void run_xor(const CfxTiling& t, const LocalTensor<int16_t>& d, const LocalTensor<int16_t>& s,
             const LocalTensor<int16_t>& s1, const LocalTensor<uint8_t>& tmp) {
  if (t.form == 0) Xor<int16_t>(d, s, s1, tmp, t.cal);
  else if (t.form == 1) Xor<int16_t>(d, s, s1, t.cal);
  else if (t.form == 2) Xor<int16_t>(d, s, s1, tmp);
  else Xor<int16_t>(d, s, s1);  // CFX:last
}

extern "C" __global__ __aicore__ void cfx_call(GM_ADDR x, GM_ADDR y, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CfxTiling, t, tiling);
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
  DataCopy(fx, gx, n);
  DataCopy(fy, gy, n);
  Duplicate(fd, 0.0f, static_cast<int32_t>(n));
  PipeBarrier<PIPE_ALL>();
  if (t.op == 3) {  // int16 through the float buffers' bytes: x, y hold n / 2 floats' worth of int16 pairs
    LocalTensor<int16_t> ix = fx.ReinterpretCast<int16_t>(), iy = fy.ReinterpretCast<int16_t>(),
                         id = fd.ReinterpretCast<int16_t>();
    run_xor(t, id, ix, iy, tmp);
  } else if (t.isHalf) {
    LocalTensor<half> hx = bh0.Get<half>(), hy = bh1.Get<half>(), hd = bhd.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, n);
    Cast(hy, fy, RoundMode::CAST_NONE, n);
    Duplicate(hd, static_cast<half>(0), static_cast<int32_t>(n));
    run_op<half>(t, hd, hx, hy, tmp);
    Cast(fd, hd, RoundMode::CAST_NONE, n);
  } else {
    run_op<float>(t, fd, fx, fy, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, fd, n);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, cfx_call, 4);
}
