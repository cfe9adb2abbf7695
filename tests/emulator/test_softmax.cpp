// AdjustSoftMaxRes (lib/activation/softmax.h): rows of softMaxRes whose max equals `from` (bitwise) become `to`; float
// with the max read every 8 elements, half with stepSizeMode 1 (every element); test_softmax.py checks with numpy.
#include "opkit_emu/pybind.h"
#include "adv_api/activation/kernel_operator_softmax_intf.h"  // CANN's include path resolves

using namespace AscendC;

struct AdjCase {
  uint32_t mode, m, k, from, maxElems;  // mode 0: float, step 8; 1: half, stepSizeMode 1; maxElems: maxTensor size
  float to;
};

// in: m*k results, then m*8 maxes (floats; half mode casts both); out: m*k results (as float), then the return value
extern "C" __global__ __aicore__ void adjust(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(AdjCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.m * t.k;
  TBuf<TPosition::VECCALC> bx, bh, bm;
  pipe.InitBuffer(bx, (n + 8 * t.m + 8) * 4);
  pipe.InitBuffer(bh, n * 2);
  pipe.InitBuffer(bm, 8 * t.m * 4);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, n + 8 * t.m);
  go.SetGlobalBuffer((__gm__ float*)out, n + 8);
  LocalTensor<float> x = bx.Get<float>(), mx = x[n];
  DataCopy(x, gi, n + 8 * t.m);
  PipeBarrier<PIPE_ALL>();
  const SoftMaxShapeInfo shape = {t.m, t.k, t.m, t.k};
  bool hit;
  if (t.mode == 0) {
    hit = AdjustSoftMaxRes<float, float>(x, mx, t.from, t.to, shape);  // ADJ:call
  } else {
    LocalTensor<half> h = bh.Get<half>(), hm = bm.Get<half>();
    Cast(h, x, RoundMode::CAST_NONE, n);
    Cast(hm, mx, RoundMode::CAST_NONE, t.m);
    PipeBarrier<PIPE_ALL>();
    hit = AdjustSoftMaxRes<half, half, false, 1>(h, hm, t.from, static_cast<half>(t.to), shape);
    Cast(x, h, RoundMode::CAST_NONE, n);
  }
  PipeBarrier<PIPE_ALL>();
  x.SetValue(n, hit ? 1.0f : 0.0f);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, x, n + 8);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, adjust, 3);
}
