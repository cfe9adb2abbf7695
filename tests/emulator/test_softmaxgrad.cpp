// SoftmaxGrad / SoftmaxGradFront (lib/activation/softmaxgrad.h): ND [M, K] half and float, isFront, the
// sharedTmpBuffer and framework forms, on the SoftMaxTiling the host stand-in's SoftMaxGradTilingFunc fills
// (test_softmaxgrad.py), compared with PyTorch's softmax backward.
#include "opkit_emu/pybind.h"
#include "adv_api/activation/kernel_operator_softmax_grad_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct SgCase {
  uint32_t isHalf, tmp, mode, m, k, oriK;  // mode: 0 SoftmaxGrad, 1 SoftmaxGrad isFront, 2 SoftmaxGradFront
  SoftMaxTiling tiling;
};

// in: M*K src (the softmax output), M*K grad; out: M*K dst (front: M*8 or M*16)
extern "C" __global__ __aicore__ void sg_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SgCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.m * t.k;
  TBuf<TPosition::VECCALC> bs, bg, bd, hs, hg, hd, bt;
  for (auto* b : {&bs, &bg, &bd}) pipe.InitBuffer(*b, n * 4);
  for (auto* b : {&hs, &hg, &hd}) pipe.InitBuffer(*b, n * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 2 * n);
  go.SetGlobalBuffer((__gm__ float*)out, n);
  LocalTensor<float> s = bs.Get<float>(), g = bg.Get<float>(), d = bd.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(s, gi, n);
  DataCopy(g, gi[n], n);
  Duplicate(d, 0.0f, n);
  PipeBarrier<PIPE_ALL>();
  const SoftMaxShapeInfo shape = {t.m, t.k, t.m, t.oriK};
  if (t.isHalf) {
    LocalTensor<half> sh = hs.Get<half>(), gh = hg.Get<half>(), dh = hd.Get<half>();
    Cast(sh, s, RoundMode::CAST_NONE, n);
    Cast(gh, g, RoundMode::CAST_NONE, n);
    Duplicate(dh, half(0), n);
    PipeBarrier<PIPE_ALL>();
    if (t.mode == 2) {
      if (t.tmp) SoftmaxGradFront<half>(dh, gh, sh, tmp, t.tiling, shape);  // SG:front
      else SoftmaxGradFront<half>(dh, gh, sh, t.tiling, shape);
    } else {
      if (t.tmp) SoftmaxGrad<half>(dh, gh, sh, tmp, t.tiling, t.mode == 1, shape);  // SG:call
      else SoftmaxGrad<half>(dh, gh, sh, t.tiling, t.mode == 1, shape);
    }
    PipeBarrier<PIPE_ALL>();
    Cast(d, dh, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
  } else {
    if (t.mode == 2) {
      if (t.tmp) SoftmaxGradFront<float>(d, g, s, tmp, t.tiling, shape);
      else SoftmaxGradFront<float>(d, g, s, t.tiling, shape);
    } else {
      if (t.tmp) SoftmaxGrad<float, false, false>(d, g, s, tmp, t.tiling, t.mode == 1, shape);
      else SoftmaxGrad<float>(d, g, s, t.tiling, t.mode == 1, shape);
    }
    PipeBarrier<PIPE_ALL>();
  }
  DataCopy(go, d, n);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, sg_call, 3);
}
