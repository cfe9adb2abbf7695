// WelfordUpdate (lib/normalization/layernorm.h): [1, abLength] half and float inputX, float mean / variance, the
// sharedTmpBuffer and framework forms, isReuseSource (float), config.isInplace; called `steps` times over the rows
// of x with nRec = 1 / i as the page's example does, compared with PyTorch (test_welford_update.py).
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/kernel_operator_layernorm_intf.h"  // CANN declares WelfordUpdate in layernorm.h

using namespace AscendC;

struct WuCase {
  uint32_t isHalf, tmp, reuse, inplace, steps, ab, abCompute;
};
constexpr WelfordUpdateConfig kInplace = {true};

template <class T, bool reuse, const WelfordUpdateConfig& cfg>
__aicore__ inline void call(const WuCase& t, const LocalTensor<float>& om, const LocalTensor<float>& ov,
                            const LocalTensor<float>& im, const LocalTensor<float>& iv, const LocalTensor<T>& x,
                            const LocalTensor<uint8_t>& tmp, float nrec) {
  const WelfordUpdateParam para = {1, t.ab, t.abCompute, nrec};
  if (t.tmp) WelfordUpdate<T, float, reuse, cfg>(om, ov, im, iv, x, tmp, para);  // WU:call
  else WelfordUpdate<T, float, reuse, cfg>(om, ov, im, iv, x, para);
}

// in: steps rows of ab floats, then ab initial mean, ab initial variance; out: ab mean, ab variance, ab last x after
extern "C" __global__ __aicore__ void wu_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(WuCase, t, tiling);
  TPipe pipe;
  const uint32_t ab = t.ab;
  TBuf<TPosition::VECCALC> bx, hx, bm0, bv0, bm1, bv1, bt;
  pipe.InitBuffer(bx, ab * 4);
  pipe.InitBuffer(hx, ab * 2);
  for (auto* b : {&bm0, &bv0, &bm1, &bv1}) pipe.InitBuffer(*b, ab * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, (t.steps + 2) * ab);
  go.SetGlobalBuffer((__gm__ float*)out, 3 * ab);
  LocalTensor<float> x = bx.Get<float>(), m0 = bm0.Get<float>(), v0 = bv0.Get<float>(), m1 = bm1.Get<float>(),
                     v1 = bv1.Get<float>();
  LocalTensor<half> xh = hx.Get<half>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(m0, gi[t.steps * ab], ab);
  DataCopy(v0, gi[(t.steps + 1) * ab], ab);
  Duplicate(m1, -1.0f, ab);
  Duplicate(v1, -1.0f, ab);
  for (uint32_t i = 0; i < t.steps; ++i) {
    DataCopy(x, gi[i * ab], ab);
    PipeBarrier<PIPE_ALL>();
    // ping-pong: step i reads (m0, v0) and writes (m1, v1), then they swap
    const LocalTensor<float>& im = i % 2 ? m1 : m0;
    const LocalTensor<float>& iv = i % 2 ? v1 : v0;
    const LocalTensor<float>& om = i % 2 ? m0 : m1;
    const LocalTensor<float>& ov = i % 2 ? v0 : v1;
    const float nrec = 1.0f / static_cast<float>(i + 1);
    if (t.isHalf) {
      Cast(xh, x, RoundMode::CAST_NONE, ab);
      PipeBarrier<PIPE_ALL>();
      if (t.inplace) call<half, false, kInplace>(t, om, ov, im, iv, xh, tmp, nrec);
      else call<half, false, WFUPDATE_DEFAULT_CFG>(t, om, ov, im, iv, xh, tmp, nrec);
    } else if (t.reuse) {
      call<float, true, WFUPDATE_DEFAULT_CFG>(t, om, ov, im, iv, x, tmp, nrec);
    } else if (t.inplace) {
      call<float, false, kInplace>(t, om, ov, im, iv, x, tmp, nrec);
    } else {
      call<float, false, WFUPDATE_DEFAULT_CFG>(t, om, ov, im, iv, x, tmp, nrec);
    }
    PipeBarrier<PIPE_ALL>();
  }
  const bool odd = t.steps % 2;
  DataCopy(go, odd ? m1 : m0, ab);
  DataCopy(go[ab], odd ? v1 : v0, ab);
  DataCopy(go[2 * ab], x, ab);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, wu_call, 3);
}
