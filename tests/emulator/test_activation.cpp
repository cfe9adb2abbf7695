// The activation family (lib/activation/{gelu,geglu,swiglu,swish,silu}.h): every form CANN declares, half and
// float, the minimum-sharedTmpBuffer rule and the equal-sources rule. test_activation.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "lib/activation/gelu.h"  // CANN's include paths resolve (kernel_operator.h already has every family)
#include "adv_api/activation/swiglu.h"

using namespace AscendC;

struct ActTiling {
  int32_t op;      // 0 Gelu 1 FasterGelu 2 FasterGeluV2 3 GeGLU 4 SwiGLU 5 Swish 6 Silu
  int32_t form;    // 0: with sharedTmpBuffer and count  1: count  2: sharedTmpBuffer  3: neither
  int32_t isHalf;  // compute in half (inputs cast from float, results cast back)
  uint32_t n;      // elements in the buffers (a multiple of 16)
  uint32_t cal;    // count
  uint32_t tmp;    // sharedTmpBuffer bytes
  float scalar;    // Swish / SwiGLU beta
  uint32_t n1;     // elements of src1 (n unless testing the equal-sizes rule)
};

#define ACT_GELU(ID, NAME)                                                   \
  case ID:                                                                   \
    if (form == 0) NAME<T, false, false>(d, s, tmp, cal);                    \
    else if (form == 1) NAME<T>(d, s, cal);                                  \
    else if (form == 2) NAME<T, true, true>(d, s, tmp, cal); /* options */   \
    else NAME<T, true, false>(d, s, cal);                                    \
    break;

template <class T>
void run_op(const ActTiling& t, LocalTensor<T>& d, LocalTensor<T>& s, LocalTensor<T>& s1,
            const LocalTensor<uint8_t>& tmp) {
  const int form = t.form;
  const uint32_t cal = t.cal;
  switch (t.op) {
    ACT_GELU(0, Gelu)  // ACT:first
    ACT_GELU(1, FasterGelu)
    ACT_GELU(2, FasterGeluV2)
    case 3:
      if (form == 0) GeGLU<T>(d, s, s1, tmp, cal);
      else if (form == 1) GeGLU<T>(d, s, s1, cal);
      else if (form == 2) GeGLU<T>(d, s, s1, tmp);
      else GeGLU<T>(d, s, s1);
      break;
    case 4:
      if (form == 0) SwiGLU<T>(d, s, s1, t.scalar, tmp, cal);
      else if (form == 1) SwiGLU<T>(d, s, s1, t.scalar, cal);
      else if (form == 2) SwiGLU<T>(d, s, s1, t.scalar, tmp);
      else SwiGLU<T>(d, s, s1, t.scalar);
      break;
    case 5: Swish<T>(d, s, cal, static_cast<T>(t.scalar)); break;
    case 6: Silu<T>(d, s, cal); break;  // ACT:last
    default: break;
  }
}

// x, y: n float inputs; out: n float results
extern "C" __global__ __aicore__ void act_call(GM_ADDR x, GM_ADDR y, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ActTiling, t, tiling);
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
  LocalTensor<float> fx = bx.Get<float>(), fy = by.Get<float>(t.n1), fd = bd.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, n);
  DataCopy(fy, gy, t.n1);
  Duplicate(fd, 0.0f, static_cast<int32_t>(n));
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh0.Get<half>(), hy = bh1.Get<half>(t.n1), hd = bhd.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, n);
    Cast(hy, fy, RoundMode::CAST_NONE, t.n1);
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
  OPKIT_EMU_PY_KERNEL(m, act_call, 4);
}
