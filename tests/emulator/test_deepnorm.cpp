// DeepNorm (lib/normalization/deepnorm.h): [B, S, H] half and float, the sharedTmpBuffer and framework forms,
// isReuseSrc (float), isBasicBlock, on the tiling the host stand-in's GetDeepNormTilingInfo fills
// (test_deepnorm.py), compared with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/kernel_operator_deepnorm_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct DnCase {
  uint32_t isHalf, tmp, reuse, basic;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  float alpha, eps;
  DeepNormTiling tiling;
};

template <class T, bool reuse, bool basic>
__aicore__ inline void call(const DnCase& t, DeepNormTiling& dt, const LocalTensor<T>& y, const LocalTensor<T>& m,
                            const LocalTensor<T>& v, const LocalTensor<T>& x, const LocalTensor<T>& gx,
                            const LocalTensor<T>& b, const LocalTensor<T>& g, const LocalTensor<uint8_t>& tmp) {
  const T alpha = static_cast<T>(t.alpha), eps = static_cast<T>(t.eps);
  if (t.tmp) DeepNorm<T, reuse, basic>(y, m, v, x, gx, b, g, tmp, alpha, eps, dt);  // DN:call
  else DeepNorm<T, reuse, basic>(y, m, v, x, gx, b, g, alpha, eps, dt);
}

// in: B*S*H x, B*S*H gx, H gamma, H beta; out: B*S*H y, B*S mean, B*S third output, B*S*H x after
extern "C" __global__ __aicore__ void dn_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(DnCase, t, tiling);
  DeepNormTiling dt = t.tiling;
  TPipe pipe;
  const uint32_t H = dt.hLength, rows = dt.bLength * dt.sLength, total = rows * H, ra = (rows + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bx, bgx, bg, bb, bm, bv, by, hx, hgx, hg, hb, hm, hv, hy, bt;
  for (auto* q : {&bx, &bgx, &by}) pipe.InitBuffer(*q, total * 4);
  for (auto* q : {&hx, &hgx, &hy}) pipe.InitBuffer(*q, total * 2);
  for (auto* q : {&bg, &bb}) pipe.InitBuffer(*q, H * 4);
  for (auto* q : {&hg, &hb}) pipe.InitBuffer(*q, H * 2);
  for (auto* q : {&bm, &bv}) pipe.InitBuffer(*q, ra * 4);
  for (auto* q : {&hm, &hv}) pipe.InitBuffer(*q, ra * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 2 * total + 2 * H);
  go.SetGlobalBuffer((__gm__ float*)out, 2 * total + 2 * rows);
  LocalTensor<float> x = bx.Get<float>(), gx = bgx.Get<float>(), y = by.Get<float>(), g = bg.Get<float>(),
                     b = bb.Get<float>(), m = bm.Get<float>(), v = bv.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, total);
  DataCopy(gx, gi[total], total);
  DataCopy(g, gi[2 * total], H);
  DataCopy(b, gi[2 * total + H], H);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> xh = hx.Get<half>(), gxh = hgx.Get<half>(), yh = hy.Get<half>(), gh = hg.Get<half>(),
                      bh = hb.Get<half>(), mh = hm.Get<half>(), vh = hv.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, total);
    Cast(gxh, gx, RoundMode::CAST_NONE, total);
    Cast(gh, g, RoundMode::CAST_NONE, H);
    Cast(bh, b, RoundMode::CAST_NONE, H);
    Duplicate(mh, half(0), ra);
    Duplicate(vh, half(0), ra);
    PipeBarrier<PIPE_ALL>();
    if (t.basic) call<half, false, true>(t, dt, yh, mh, vh, xh, gxh, bh, gh, tmp);
    else call<half, false, false>(t, dt, yh, mh, vh, xh, gxh, bh, gh, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(y, yh, RoundMode::CAST_NONE, total);
    Cast(m, mh, RoundMode::CAST_NONE, ra);
    Cast(v, vh, RoundMode::CAST_NONE, ra);
    Cast(x, xh, RoundMode::CAST_NONE, total);
    PipeBarrier<PIPE_ALL>();
  } else {
    if (t.reuse) call<float, true, false>(t, dt, y, m, v, x, gx, b, g, tmp);
    else if (t.basic) call<float, false, true>(t, dt, y, m, v, x, gx, b, g, tmp);
    else call<float, false, false>(t, dt, y, m, v, x, gx, b, g, tmp);
    PipeBarrier<PIPE_ALL>();
  }
  DataCopy(go, y, total);
  DataCopyPad(go[total], m, {1, rows * 4, 0, 0, 0});
  DataCopyPad(go[total + rows], v, {1, rows * 4, 0, 0, 0});
  DataCopyPad(go[total + 2 * rows], x, {1, total * 4, 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, dn_call, 3);
}
