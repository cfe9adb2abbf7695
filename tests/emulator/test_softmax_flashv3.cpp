// SoftmaxFlashV3 (lib/activation/softmaxflashv3.h): a half [M, K] chunk without update, then a second chunk with
// update carrying the first call's mean / sum / max, on the tiling the test passes; test_softmax_flashv3.py checks
// every output against the page's formula computed with PyTorch. Outputs start at -7 (rows not computed keep it).
#include "opkit_emu/pybind.h"
#include "adv_api/activation/softmaxflashv3.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct F3Case {
  uint32_t tmp, m, k, loopCnt, splitMeanCnt, oriM, oriK;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  float alpha;
  SoftMaxTiling tiling;  // from the host stand-in's SoftMaxFlashV3TilingFunc (test_softmax_flashv3.py)
};

// in: 2 M*K floats (chunks); out (floats): M*K dst1, M*K dst2, then 7 blocks of M*8: mean1, sum1, max1, mean2, sum2,
// max2, expMax (its first 8 of 16 halves a row)
extern "C" __global__ __aicore__ void f3_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(F3Case, t, tiling);
  TPipe pipe;
  const uint32_t n = t.m * t.k, nb = t.m * 8;
  TBuf<TPosition::VECCALC> bx, bh, bd, bred, bem, bt;
  pipe.InitBuffer(bx, 2 * n * 4);
  pipe.InitBuffer(bh, 2 * n * 2);
  pipe.InitBuffer(bd, 2 * n * 2);
  pipe.InitBuffer(bred, 7 * nb * 4);
  pipe.InitBuffer(bem, t.m * 32);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 2 * n);
  go.SetGlobalBuffer((__gm__ float*)out, 2 * n + 7 * nb);
  LocalTensor<float> x = bx.Get<float>(), red = bred.Get<float>();
  LocalTensor<half> h = bh.Get<half>(), d = bd.Get<half>(), em = bem.Get<half>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, 2 * n);
  PipeBarrier<PIPE_ALL>();
  Cast(h, x, RoundMode::CAST_NONE, 2 * n);
  Duplicate(d, half(-7.0f), 2 * n);  // what a row the tiling leaves out keeps
  Duplicate(red, -7.0f, 7 * nb);
  Duplicate(em, half(-7.0f), t.m * 16);
  PipeBarrier<PIPE_ALL>();
  const SoftMaxTiling& tl = t.tiling;
  const SoftMaxParams p = {t.m, t.k, t.oriM, t.oriK, t.loopCnt, t.splitMeanCnt, t.alpha};
  LocalTensor<float> mean1 = red, sum1 = red[nb], max1 = red[2 * nb], mean2 = red[3 * nb], sum2 = red[4 * nb],
                     max2 = red[5 * nb];
  if (t.tmp) {
    SoftmaxFlashV3<half, float, false>(d, mean1, sum1, max1, h, em, mean1, sum1, max1, tmp, tl, p);  // F3:first
    PipeBarrier<PIPE_ALL>();
    SoftmaxFlashV3<half, float, true>(d[n], mean2, sum2, max2, h[n], em, mean1, sum1, max1, tmp, tl, p);
  } else {
    SoftmaxFlashV3<half, float, false>(d, mean1, sum1, max1, h, em, mean1, sum1, max1, tl, p);
    PipeBarrier<PIPE_ALL>();
    SoftmaxFlashV3<half, float, true>(d[n], mean2, sum2, max2, h[n], em, mean1, sum1, max1, tl, p);
  }
  PipeBarrier<PIPE_ALL>();
  Cast(x, d, RoundMode::CAST_NONE, 2 * n);
  for (uint32_t r = 0; r < t.m; ++r)
    for (uint32_t j = 0; j < 8; ++j) red.SetValue(6 * nb + r * 8 + j, static_cast<float>(em.GetValue(r * 16 + j)));
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, x, 2 * n);
  DataCopy(go[2 * n], red, 7 * nb);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, f3_call, 3);
}
