// SimpleSoftMax (lib/activation/simplesoftmax.h): ND [M, K] float, half, and half with float sum / max, the
// sharedTmpBuffer and framework forms; the row max / sum come from SoftMax (the emulator's, tested in
// test_adv_softmax) as a kernel would chain them; compared with PyTorch (test_simplesoftmax.py).
#include "opkit_emu/pybind.h"
#include "adv_api/activation/kernel_operator_simple_softmax_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct SsCase {
  uint32_t mode, tmp, m, k;  // mode: 0 float, 1 half, 2 half with float sum / max; tmp: 0 = framework form
  SoftMaxTiling tiling;
};

// in: M*K x (the rows SoftMax reduces), M*K y (the rows SimpleSoftMax normalises with x's max / sum); out: M*K
extern "C" __global__ __aicore__ void ss_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SsCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.m * t.k, nr = t.m * 16;
  TBuf<TPosition::VECCALC> bx, by, bd, hx, hy, hd, bsum, bmax, hsum, hmax, bt;
  for (auto* b : {&bx, &by, &bd}) pipe.InitBuffer(*b, n * 4);
  for (auto* b : {&hx, &hy, &hd}) pipe.InitBuffer(*b, n * 2);
  for (auto* b : {&bsum, &bmax}) pipe.InitBuffer(*b, nr * 4);
  for (auto* b : {&hsum, &hmax}) pipe.InitBuffer(*b, nr * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 2 * n);
  go.SetGlobalBuffer((__gm__ float*)out, n);
  LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>(), d = bd.Get<float>(), sm = bsum.Get<float>(),
                     mx = bmax.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, n);
  DataCopy(y, gi[n], n);
  PipeBarrier<PIPE_ALL>();
  const SoftMaxShapeInfo shape = {t.m, t.k, t.m, t.k};
  if (t.mode == 0) {
    SoftMax<float>(d, sm, mx, x, t.tiling, shape);
    PipeBarrier<PIPE_ALL>();
    if (t.tmp) SimpleSoftMax<float>(d, sm, mx, y, tmp, t.tiling, shape);  // SS:call
    else SimpleSoftMax<float>(d, sm, mx, y, t.tiling, shape);
  } else {
    LocalTensor<half> xh = hx.Get<half>(), yh = hy.Get<half>(), dh = hd.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, n);
    Cast(yh, y, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
    if (t.mode == 1) {
      LocalTensor<half> smh = hsum.Get<half>(), mxh = hmax.Get<half>();
      SoftMax<half>(dh, smh, mxh, xh, t.tiling, shape);
      PipeBarrier<PIPE_ALL>();
      if (t.tmp) SimpleSoftMax<half>(dh, smh, mxh, yh, tmp, t.tiling, shape);
      else SimpleSoftMax<half>(dh, smh, mxh, yh, t.tiling, shape);
    } else {
      SoftMax<half>(dh, sm, mx, xh, t.tiling, shape);
      PipeBarrier<PIPE_ALL>();
      if (t.tmp) SimpleSoftMax<half>(dh, sm, mx, yh, tmp, t.tiling, shape);
      else SimpleSoftMax<half>(dh, sm, mx, yh, t.tiling, shape);
    }
    PipeBarrier<PIPE_ALL>();
    Cast(d, dh, RoundMode::CAST_NONE, n);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, n);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, ss_call, 3);
}
