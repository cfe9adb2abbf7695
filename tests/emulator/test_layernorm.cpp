// LayerNorm (lib/normalization/layernorm.h): [B, S, H] half and float, the sharedTmpBuffer and framework forms,
// isReuseSource for float, on the tiling the host stand-in's GetLayerNormNDTilingInfo fills (test_layernorm.py),
// compared with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/kernel_operator_layernorm_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"  // LayerNormTiling, as a kernel's generated tiling header brings it

using namespace AscendC;

struct LnCase {
  uint32_t isHalf, tmp, reuse, calls;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  float eps;
  LayerNormTiling tiling;
};

// x: B*S*H floats, H gamma, H beta; out: B*S*H y, B*S mean, B*S variance, B*S*H inputX after the call,
// then the tiling's bshCurLength / bsCurLength after the call
extern "C" __global__ __aicore__ void ln_call(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LnCase, t, tiling);
  LayerNormTiling lt = t.tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bg, bb, bm, bv, bh, bhg, bhb, bhm, bhv, bhd, bd, bt, bk;
  const uint32_t H = lt.hLength, rows = lt.bLength * lt.sLength, total = rows * H, ra = (rows + 15) / 16 * 16;
  pipe.InitBuffer(bx, total * 4);
  pipe.InitBuffer(bg, H * 4);
  pipe.InitBuffer(bb, H * 4);
  pipe.InitBuffer(bm, ra * 4);
  pipe.InitBuffer(bv, ra * 4);
  pipe.InitBuffer(bh, total * 2);
  pipe.InitBuffer(bhg, H * 2);
  pipe.InitBuffer(bhb, H * 2);
  pipe.InitBuffer(bhm, ra * 2);
  pipe.InitBuffer(bhv, ra * 2);
  pipe.InitBuffer(bd, total * 4);
  pipe.InitBuffer(bhd, total * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(bk, 32);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, total + 2 * H);
  go.SetGlobalBuffer((__gm__ float*)out, 2 * total + 2 * rows + 8);
  LocalTensor<float> fx = bx.Get<float>(), fg = bg.Get<float>(), fb = bb.Get<float>(), fd = bd.Get<float>();
  LocalTensor<float> fm = bm.Get<float>(), fv = bv.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, total);
  DataCopy(fg, gx[total], H);
  DataCopy(fb, gx[total + H], H);
  Duplicate(fd, 0.0f, total);
  Duplicate(fm, 0.0f, ra);
  Duplicate(fv, 0.0f, ra);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh.Get<half>(), hg = bhg.Get<half>(), hb = bhb.Get<half>(), hd = bhd.Get<half>();
    LocalTensor<half> hm = bhm.Get<half>(), hv = bhv.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, total);
    Cast(hg, fg, RoundMode::CAST_NONE, H);
    Cast(hb, fb, RoundMode::CAST_NONE, H);
    Duplicate(hd, half(0), total);
    Duplicate(hm, half(0), ra);
    Duplicate(hv, half(0), ra);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t i = 0; i < t.calls; ++i) {
      if (t.tmp) LayerNorm<half, false>(hd, hm, hv, hx, hg, hb, tmp, static_cast<half>(t.eps), lt);  // LN:call
      else LayerNorm<half>(hd, hm, hv, hx, hg, hb, static_cast<half>(t.eps), lt);
      PipeBarrier<PIPE_ALL>();
    }
    Cast(fd, hd, RoundMode::CAST_NONE, total);
    Cast(fm, hm, RoundMode::CAST_NONE, ra);
    Cast(fv, hv, RoundMode::CAST_NONE, ra);
    Cast(fx, hx, RoundMode::CAST_NONE, total);
    PipeBarrier<PIPE_ALL>();
  } else {
    for (uint32_t i = 0; i < t.calls; ++i) {
      if (t.reuse) {
        if (t.tmp) LayerNorm<float, true>(fd, fm, fv, fx, fg, fb, tmp, t.eps, lt);
        else LayerNorm<float, true>(fd, fm, fv, fx, fg, fb, t.eps, lt);
      } else {
        if (t.tmp) LayerNorm<float>(fd, fm, fv, fx, fg, fb, tmp, t.eps, lt);
        else LayerNorm<float, false>(fd, fm, fv, fx, fg, fb, t.eps, lt);
      }
      PipeBarrier<PIPE_ALL>();
    }
  }
  DataCopy(go, fd, total);
  DataCopyPad(go[total], fm, {1, rows * 4, 0, 0, 0});
  DataCopyPad(go[total + rows], fv, {1, rows * 4, 0, 0, 0});
  DataCopyPad(go[total + 2 * rows], fx, {1, total * 4, 0, 0, 0});
  LocalTensor<float> k = bk.Get<float>();
  k.SetValue(0, static_cast<float>(lt.bshCurLength));
  k.SetValue(1, static_cast<float>(lt.bsCurLength));
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(go[2 * total + 2 * rows], k, {1, 8, 0, 0, 0});
}

// The rstd form (LayerNormPara / LayerNormSeparateTiling): mode 0 float / float, 1 half / half, 2 half / float gamma
// and beta, 3 float with config isNoBeta.
struct LnrCase {
  uint32_t mode, tmp, a, r, w;
  float eps;
  LayerNormSeparateTiling tiling;
};
constexpr LayerNormConfig kNoBeta = {true, false, false, true};

// in: A*W x, R gamma, R beta (floats); out: A*W y, A mean, A rstd, A*W x after
extern "C" __global__ __aicore__ void lnr_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LnrCase, t, tiling);
  const LayerNormSeparateTiling& lt = t.tiling;
  TPipe pipe;
  const uint32_t n = t.a * t.w, ra = (t.a + 15) / 16 * 16, rr = (t.r + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bx, by, bg, bb, bm, bs, hx, hy, hg, hb, bt;
  for (auto* q : {&bx, &by}) pipe.InitBuffer(*q, n * 4);
  for (auto* q : {&hx, &hy}) pipe.InitBuffer(*q, n * 2);
  for (auto* q : {&bg, &bb}) pipe.InitBuffer(*q, rr * 4);
  for (auto* q : {&hg, &hb}) pipe.InitBuffer(*q, rr * 2);
  for (auto* q : {&bm, &bs}) pipe.InitBuffer(*q, ra * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, n + 2 * t.r);
  go.SetGlobalBuffer((__gm__ float*)out, 2 * n + 2 * t.a);
  LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>(), g = bg.Get<float>(), b = bb.Get<float>(),
                     m = bm.Get<float>(), rs = bs.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  const LayerNormPara para = {t.a, t.r, t.w};
  DataCopy(x, gi, n);
  DataCopyPad(g, gi[n], {1, t.r * 4, 0, 0, 0}, {false, 0, 0, 0});
  DataCopyPad(b, gi[n + t.r], {1, t.r * 4, 0, 0, 0}, {false, 0, 0, 0});
  Duplicate(y, 0.0f, n);
  PipeBarrier<PIPE_ALL>();
  if (t.mode == 0 || t.mode == 3) {
    if (t.mode == 3) LayerNorm<float, float, false, kNoBeta>(y, m, rs, x, g, b, t.eps, tmp, para, lt);
    else if (t.tmp) LayerNorm<float, float>(y, m, rs, x, g, b, t.eps, tmp, para, lt);  // LNR:call
    else LayerNorm<float, float>(y, m, rs, x, g, b, t.eps, para, lt);
  } else {
    LocalTensor<half> xh = hx.Get<half>(), yh = hy.Get<half>(), gh = hg.Get<half>(), bh = hb.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, n);
    Cast(gh, g, RoundMode::CAST_NONE, rr);
    Cast(bh, b, RoundMode::CAST_NONE, rr);
    Duplicate(yh, half(0), n);
    PipeBarrier<PIPE_ALL>();
    if (t.mode == 1) LayerNorm<half, half>(yh, m, rs, xh, gh, bh, t.eps, tmp, para, lt);
    else LayerNorm<float, half>(yh, m, rs, xh, g, b, t.eps, tmp, para, lt);
    PipeBarrier<PIPE_ALL>();
    Cast(y, yh, RoundMode::CAST_NONE, n);
    Cast(x, xh, RoundMode::CAST_NONE, n);
  }
  PipeBarrier<PIPE_ALL>();
  // only the first r columns of y are defined (the padding is poison, and copying it out would be flagged)
  DataCopyPad(go, y, {static_cast<uint16_t>(t.a), t.r * 4, (t.w - t.r) * 4 / 32, 0, 0});
  DataCopyPad(go[n], m, {1, t.a * 4, 0, 0, 0});
  DataCopyPad(go[n + t.a], rs, {1, t.a * 4, 0, 0, 0});
  DataCopyPad(go[n + 2 * t.a], x, {1, n * 4, 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, ln_call, 3);
  OPKIT_EMU_PY_KERNEL(m, lnr_call, 3);
}
