// LayerNormGrad + LayerNormGradBeta (lib/normalization/layernormgrad.h, layernormgradbeta.h): [B, S, H] half and
// float, the sharedTmpBuffer and framework forms, isReuseSource for float, on the tilings the host stand-in's
// GetLayerNormGradNDTilingInfo / GetLayerNormGradBetaNDTilingInfo fill (test_layernorm_grad.py), compared with
// PyTorch's autograd of layer_norm.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/kernel_operator_layernormgrad_intf.h"      // CANN's include paths resolve
#include "adv_api/normalization/kernel_operator_layernormgradbeta_intf.h"
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct LngCase {
  uint32_t isHalf, tmp, tmpBeta, reuse;  // tmp / tmpBeta: sharedTmpBuffer bytes, 0 = the framework form
  float eps;
  LayerNormGradTiling g;
  LayerNormGradBetaTiling gb;
};

// in: B*S*H dy, B*S*H x, B*S mean, B*S variance, H gamma (floats)
// out: B*S*H pdX, B*S*H resForGamma, H pdGamma, H pdBeta, B*S*H inputDy after, B*S*H inputX after
extern "C" __global__ __aicore__ void lng_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LngCase, t, tiling);
  LayerNormGradTiling gt = t.g;
  LayerNormGradBetaTiling bt = t.gb;
  TPipe pipe;
  const uint32_t H = gt.hLength, rows = gt.bLength * gt.sLength, total = rows * H, ra = (rows + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bdy, bx, bm, bv, bg, bpx, brg, bpg, bpb, hdy, hx, hm, hv, hg, hpx, hrg, hpg, hpb, btmp, btb;
  for (auto* b : {&bdy, &bx, &bpx, &brg}) pipe.InitBuffer(*b, total * 4);
  for (auto* b : {&bm, &bv}) pipe.InitBuffer(*b, ra * 4);
  for (auto* b : {&bg, &bpg, &bpb}) pipe.InitBuffer(*b, H * 4);
  for (auto* b : {&hdy, &hx, &hpx, &hrg}) pipe.InitBuffer(*b, total * 2);
  for (auto* b : {&hm, &hv}) pipe.InitBuffer(*b, ra * 2);
  for (auto* b : {&hg, &hpg, &hpb}) pipe.InitBuffer(*b, H * 2);
  pipe.InitBuffer(btmp, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(btb, t.tmpBeta ? t.tmpBeta : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 2 * total + 2 * rows + H);
  go.SetGlobalBuffer((__gm__ float*)out, 4 * total + 2 * H);
  LocalTensor<float> dy = bdy.Get<float>(), x = bx.Get<float>(), m = bm.Get<float>(), v = bv.Get<float>();
  LocalTensor<float> g = bg.Get<float>(), px = bpx.Get<float>(), rg = brg.Get<float>(), pg = bpg.Get<float>(),
                     pb = bpb.Get<float>();
  LocalTensor<uint8_t> tmp = btmp.Get<uint8_t>(t.tmp ? t.tmp : 32), tmpb = btb.Get<uint8_t>(t.tmpBeta ? t.tmpBeta : 32);
  DataCopy(dy, gi, total);
  DataCopy(x, gi[total], total);
  DataCopyPad(m, gi[2 * total], {1, rows * 4, 0, 0, 0}, {false, 0, 0, 0});
  DataCopyPad(v, gi[2 * total + rows], {1, rows * 4, 0, 0, 0}, {false, 0, 0, 0});
  DataCopyPad(g, gi[2 * total + 2 * rows], {1, H * 4, 0, 0, 0}, {false, 0, 0, 0});
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> dyh = hdy.Get<half>(), xh = hx.Get<half>(), mh = hm.Get<half>(), vh = hv.Get<half>(),
                      gh = hg.Get<half>(), pxh = hpx.Get<half>(), rgh = hrg.Get<half>(), pgh = hpg.Get<half>(),
                      pbh = hpb.Get<half>();
    Cast(dyh, dy, RoundMode::CAST_NONE, total);
    Cast(xh, x, RoundMode::CAST_NONE, total);
    Cast(mh, m, RoundMode::CAST_NONE, ra);
    Cast(vh, v, RoundMode::CAST_NONE, ra);
    Cast(gh, g, RoundMode::CAST_NONE, H);
    PipeBarrier<PIPE_ALL>();
    const half eps = static_cast<half>(t.eps);
    if (t.tmp) LayerNormGrad<half, false>(pxh, rgh, dyh, xh, vh, mh, gh, tmp, eps, gt);  // LNG:call
    else LayerNormGrad<half>(pxh, rgh, dyh, xh, vh, mh, gh, eps, gt);
    PipeBarrier<PIPE_ALL>();
    if (t.tmpBeta) LayerNormGradBeta<half>(pgh, pbh, rgh, dyh, tmpb, bt);  // LNGB:call
    else LayerNormGradBeta<half>(pgh, pbh, rgh, dyh, bt);
    PipeBarrier<PIPE_ALL>();
    Cast(px, pxh, RoundMode::CAST_NONE, total);
    Cast(rg, rgh, RoundMode::CAST_NONE, total);
    Cast(pg, pgh, RoundMode::CAST_NONE, H);
    Cast(pb, pbh, RoundMode::CAST_NONE, H);
    PipeBarrier<PIPE_ALL>();
  } else {
    if (t.reuse) {
      if (t.tmp) LayerNormGrad<float, true>(px, rg, dy, x, v, m, g, tmp, t.eps, gt);
      else LayerNormGrad<float, true>(px, rg, dy, x, v, m, g, t.eps, gt);
    } else {
      if (t.tmp) LayerNormGrad<float, false>(px, rg, dy, x, v, m, g, tmp, t.eps, gt);
      else LayerNormGrad<float>(px, rg, dy, x, v, m, g, t.eps, gt);
    }
    PipeBarrier<PIPE_ALL>();
    // GradBeta gets the original dy back when LayerNormGrad reused it
    if (t.reuse) DataCopyPad(go[2 * total + 2 * H], dy, {1, total * 4, 0, 0, 0});
    if (t.reuse) DataCopyPad(go[3 * total + 2 * H], x, {1, total * 4, 0, 0, 0});
    PipeBarrier<PIPE_ALL>();
    if (t.reuse) DataCopy(dy, gi, total);
    PipeBarrier<PIPE_ALL>();
    if (t.tmpBeta) LayerNormGradBeta<float>(pg, pb, rg, dy, tmpb, bt);
    else LayerNormGradBeta<float>(pg, pb, rg, dy, bt);
    PipeBarrier<PIPE_ALL>();
  }
  DataCopy(go, px, total);
  DataCopy(go[total], rg, total);
  DataCopyPad(go[2 * total], pg, {1, H * 4, 0, 0, 0});
  DataCopyPad(go[2 * total + H], pb, {1, H * 4, 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, lng_call, 3);
}
