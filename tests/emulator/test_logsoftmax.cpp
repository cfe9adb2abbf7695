// LogSoftMax (lib/activation/logsoftmax.h): ND [M, K] half and float with sharedTmpBuffer (the A2 form), compared
// with PyTorch (log10 of the softmax, as CANN's page and A2 code compute it; test_logsoftmax.py).
#include "opkit_emu/pybind.h"
#include "adv_api/activation/kernel_operator_logsoftmax_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct LsCase {
  uint32_t isHalf, tmp, m, k, oriK;
  LogSoftMaxTiling tiling;
};

// in: M*K src; out: M*K dst, M*8 sum, M*8 max (floats; half: the first 8 of each row's 16)
extern "C" __global__ __aicore__ void ls_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LsCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.m * t.k, nr = t.m * 16;
  TBuf<TPosition::VECCALC> bs, bd, bsum, bmax, hs, hd, hsum, hmax, bt;
  for (auto* b : {&bs, &bd}) pipe.InitBuffer(*b, n * 4);
  for (auto* b : {&hs, &hd}) pipe.InitBuffer(*b, n * 2);
  for (auto* b : {&bsum, &bmax}) pipe.InitBuffer(*b, nr * 4);
  for (auto* b : {&hsum, &hmax}) pipe.InitBuffer(*b, nr * 2);
  pipe.InitBuffer(bt, t.tmp);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, n);
  go.SetGlobalBuffer((__gm__ float*)out, n + 16 * t.m);
  LocalTensor<float> s = bs.Get<float>(), d = bd.Get<float>(), sm = bsum.Get<float>(), mx = bmax.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp);
  DataCopy(s, gi, n);
  PipeBarrier<PIPE_ALL>();
  const SoftMaxShapeInfo shape = {t.m, t.k, t.m, t.oriK};
  if (t.isHalf) {
    LocalTensor<half> sh = hs.Get<half>(), dh = hd.Get<half>(), smh = hsum.Get<half>(), mxh = hmax.Get<half>();
    Cast(sh, s, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
    LogSoftMax<half>(dh, smh, mxh, sh, tmp, t.tiling, shape);  // LS:call
    PipeBarrier<PIPE_ALL>();
    Cast(d, dh, RoundMode::CAST_NONE, n);
    Cast(sm, smh, RoundMode::CAST_NONE, nr);
    Cast(mx, mxh, RoundMode::CAST_NONE, nr);
    PipeBarrier<PIPE_ALL>();
    // keep 8 of each row's 16 so both types come out as [M, 8]
    for (uint32_t r = 0; r < t.m; ++r)
      for (uint32_t j = 0; j < 8; ++j) sm.SetValue(r * 8 + j, sm.GetValue(r * 16 + j)), mx.SetValue(r * 8 + j, mx.GetValue(r * 16 + j));
  } else {
    LogSoftMax<float, false, false>(d, sm, mx, s, tmp, t.tiling, shape);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, n);
  DataCopyPad(go[n], sm, {1, t.m * 32, 0, 0, 0});
  DataCopyPad(go[n + 8 * t.m], mx, {1, t.m * 32, 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, ls_call, 3);
}
