// SoftmaxFlash (lib/activation/softmaxflash.h, the deprecated v1): ND [M, K] float, half, and half with float sums / maxima, the
// sharedTmpBuffer and framework forms; a first call without update over chunk 1, then an update over chunk 2 with the
// first call's max / sum (test_softmax_flash.py checks them against PyTorch's softmax of both chunks).
#include "opkit_emu/pybind.h"
#include "adv_api/activation/kernel_operator_softmax_flash_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct SfCase {
  uint32_t mode, tmp, m, k, oriK;  // mode: 0 float, 1 half, 2 half with float sum / max; tmp: 0 = framework form
  uint32_t perturb;                // float only: 1 row 0's inMax lane 3 changed, 2 that lane left uninitialized
  SoftMaxTiling tiling;
};

template <class T, class U>
__aicore__ inline void steps(const SfCase& t, const LocalTensor<T>& x1, const LocalTensor<T>& x2,
                             const LocalTensor<T>& d1, const LocalTensor<T>& d2, const LocalTensor<U>& s1,
                             const LocalTensor<U>& m1, const LocalTensor<U>& s2, const LocalTensor<U>& m2,
                             const LocalTensor<T>& em, const LocalTensor<uint8_t>& tmp,
                             const LocalTensor<U>& fresh) {
  const SoftMaxShapeInfo shape = {t.m, t.k, t.m, t.oriK};
  LocalTensor<U> in_max = m1;
  if (t.tmp) SoftmaxFlash<T, false>(d1, s1, m1, x1, em, s1, m1, tmp, t.tiling, false, shape);  // SF:first
  else SoftmaxFlash<T, false>(d1, s1, m1, x1, em, s1, m1, t.tiling, false, shape);
  PipeBarrier<PIPE_ALL>();
  const uint32_t bu = 32 / sizeof(U);
  if (t.perturb == 1) m1.SetValue(3, static_cast<U>(static_cast<float>(m1.GetValue(3)) + 1.0f));
  if (t.perturb == 2) {  // fresh (never written) gets max1 but row 0's lane 3
    for (uint32_t i = 0; i < t.m * bu; ++i)
      if (i != 3) fresh.SetValue(i, m1.GetValue(i));
    in_max = fresh;
  }
  PipeBarrier<PIPE_ALL>();
  if (t.tmp) SoftmaxFlash<T, false>(d2, s2, m2, x2, em, s1, in_max, tmp, t.tiling, true, shape);  // SF:update
  else SoftmaxFlash<T, false>(d2, s2, m2, x2, em, s1, in_max, t.tiling, true, shape);
  PipeBarrier<PIPE_ALL>();
}

// in: M*K chunk 1, M*K chunk 2; out (floats): M*K dst1, M*K dst2, M*8 sum1, M*8 max1, M*8 sum2, M*8 max2, M*8 expMax
extern "C" __global__ __aicore__ void sf_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SfCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.m * t.k, nr = t.m * 16;
  TBuf<TPosition::VECCALC> bx1, bx2, bd1, bd2, hx1, hx2, hd1, hd2, bred, hred, bt, bpk, bfr;
  for (auto* b : {&bx1, &bx2, &bd1, &bd2}) pipe.InitBuffer(*b, n * 4);
  for (auto* b : {&hx1, &hx2, &hd1, &hd2}) pipe.InitBuffer(*b, n * 2);
  pipe.InitBuffer(bred, 5 * nr * 4);
  pipe.InitBuffer(hred, 5 * nr * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(bpk, 40 * t.m * 4);
  pipe.InitBuffer(bfr, nr * 4);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 2 * n);
  go.SetGlobalBuffer((__gm__ float*)out, 2 * n + 40 * t.m);
  LocalTensor<float> x1 = bx1.Get<float>(), x2 = bx2.Get<float>(), d1 = bd1.Get<float>(), d2 = bd2.Get<float>();
  LocalTensor<float> red = bred.Get<float>(), pk = bpk.Get<float>();
  LocalTensor<half> hred_ = hred.Get<half>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x1, gi, n);
  DataCopy(x2, gi[n], n);
  PipeBarrier<PIPE_ALL>();
  // five per-row block tensors: sum1, max1, sum2, max2, expMax (float: 8 a row; half: 16 a row)
  if (t.mode == 0) {
    steps<float, float>(t, x1, x2, d1, d2, red, red[nr], red[2 * nr], red[3 * nr], red[4 * nr], tmp,
                        bfr.Get<float>());
  } else {
    LocalTensor<half> h1 = hx1.Get<half>(), h2 = hx2.Get<half>(), e1 = hd1.Get<half>(), e2 = hd2.Get<half>();
    Cast(h1, x1, RoundMode::CAST_NONE, n);
    Cast(h2, x2, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
    if (t.mode == 1) {
      steps<half, half>(t, h1, h2, e1, e2, hred_, hred_[nr], hred_[2 * nr], hred_[3 * nr], hred_[4 * nr], tmp,
                        bfr.Get<half>());
      Cast(red, hred_, RoundMode::CAST_NONE, 5 * nr);
    } else {
      steps<half, float>(t, h1, h2, e1, e2, red, red[nr], red[2 * nr], red[3 * nr], hred_[4 * nr], tmp,
                         bfr.Get<float>());
      Cast(red[4 * nr], hred_[4 * nr], RoundMode::CAST_NONE, nr);
    }
    Cast(d1, e1, RoundMode::CAST_NONE, n);
    Cast(d2, e2, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
  }
  // pack each row's first 8 values of each block tensor (per-row stride 8 for float tensors, 16 for half ones)
  const uint32_t per = t.mode == 1 ? 16 : 8;
  for (uint32_t q = 0; q < 5; ++q) {
    const uint32_t stride = q == 4 && t.mode == 2 ? 16 : per;
    for (uint32_t r = 0; r < t.m; ++r)
      for (uint32_t j = 0; j < 8; ++j) pk.SetValue((q * t.m + r) * 8 + j, red.GetValue(q * nr + r * stride + j));
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d1, n);
  DataCopy(go[n], d2, n);
  DataCopyPad(go[2 * n], pk, {1, 40 * t.m * 4, 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, sf_call, 3);
}
