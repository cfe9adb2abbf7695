// SoftMax, the advanced API (opkit_emu/adv_softmax.h): rows of [srcM, srcK] reduced over oriSrcK columns,
// sum/max broadcast over one 32-byte block per row, the half source with float sum/max, the form without
// sum/max, poison per row, and the srcK alignment CANN's CPU-debug check asserts.
#include "opkit_emu/pybind.h"

using namespace AscendC;

struct SmTiling {
  int32_t scenario;  // 0: float, sum/max float; 1: half, sum/max float; 2: float without sum/max; 3: srcK unaligned;
                     // 4: float, the last row left unwritten in UB (poison) and copied out; 5: half, sum/max half
  uint32_t m, k, oriK;
};

// x: m * k source values (float, or half in the low 2 bytes of each float slot for scenario 1);
// out: m * k results (as float), then m * 8 sums and m * 8 maxes (float)
extern "C" __global__ __aicore__ void softmax_rows(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SmTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bs, bd, bsum, bmax, bwork, bf;
  const uint32_t n = t.m * t.k;
  pipe.InitBuffer(bs, n * 4);
  pipe.InitBuffer(bd, n * 4);
  pipe.InitBuffer(bsum, t.m * 32);
  pipe.InitBuffer(bmax, t.m * 32);
  pipe.InitBuffer(bwork, 4096);
  pipe.InitBuffer(bf, n * 4);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  go.SetGlobalBuffer((__gm__ float*)out, n + 16 * t.m);
  LocalTensor<float> s = bs.Get<float>(), d = bd.Get<float>(), sum = bsum.Get<float>(), mx = bmax.Get<float>();
  LocalTensor<float> f = bf.Get<float>();
  SoftMaxTiling smTiling{};
  SoftMaxShapeInfo shape{t.m, t.k, t.m, t.oriK};
  const uint32_t loaded = t.scenario == 4 ? n - t.k : n;
  DataCopy(s, gx, loaded);
  PipeBarrier<PIPE_ALL>();
  if (t.scenario == 1) {
    LocalTensor<half> sh = bd.Get<half>(), dh = bs.Get<half>()[n];  // dh: the upper half of s's buffer
    Cast(sh, s, RoundMode::CAST_NONE, n);
    SoftMax<half>(dh, sum, mx, sh, bwork.Get<uint8_t>(), smTiling, shape);
    Cast(f, dh, RoundMode::CAST_NONE, n);
  } else if (t.scenario == 5) {
    LocalTensor<half> sh = bd.Get<half>(), dh = bs.Get<half>()[n], sumh = bsum.Get<half>(), maxh = bmax.Get<half>();
    Cast(sh, s, RoundMode::CAST_NONE, n);
    SoftMax<half>(dh, sumh, maxh, sh, smTiling, shape);
    Cast(f, dh, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t r = 0; r < t.m; ++r) {  // the first 8 of each row's 16 halves, widened in place
      float vs[8], vm[8];
      for (uint32_t j = 0; j < 8; ++j)
        vs[j] = static_cast<float>(sumh.GetValue(r * 16 + j)), vm[j] = static_cast<float>(maxh.GetValue(r * 16 + j));
      for (uint32_t j = 0; j < 8; ++j) sum.SetValue(r * 8 + j, vs[j]), mx.SetValue(r * 8 + j, vm[j]);
    }
  } else if (t.scenario == 2) {
    SoftMax<float>(f, s, smTiling, shape);
  } else {
    SoftMax<float>(d, sum, mx, s, smTiling, shape);  // SOFTMAX:call
    Adds(f, d, 0.0f, n);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, f, t.scenario == 4 ? n - t.k : n);
  if (t.scenario != 2) {
    DataCopy(go[n], sum, 8 * t.m);  // SOFTMAX:stats
    DataCopy(go[n + 8 * t.m], mx, 8 * t.m);
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, softmax_rows, 3);
}
