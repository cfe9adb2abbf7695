// GroupNorm (lib/normalization/groupnorm.h): [N, C, H, W] half and float (each channel's H x W padded to 32 bytes),
// the sharedTmpBuffer and framework forms, isReuseSource (float), on the tiling the host stand-in's
// GetGroupNormNDTilingInfo fills (test_groupnorm.py), compared with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/groupnorm.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct GnCase {
  uint32_t isHalf, tmp, reuse;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  float eps;
  float fill;  // the output's previous content (the smallShape float tail round reads its padding lanes)
  uint32_t alias;  // 1: outputVariance is outputMean (refused); 2 / 3: out starts with inputX after the call from
                   // element tiling.inputRoundSize / 0 (float), in place of the output
  GroupNormTiling tiling;
};

template <class T, bool reuse>
__aicore__ inline void call(const GnCase& t, GroupNormTiling& gt, const LocalTensor<T>& y, const LocalTensor<T>& m,
                            const LocalTensor<T>& v, const LocalTensor<T>& x, const LocalTensor<T>& g,
                            const LocalTensor<T>& b, const LocalTensor<uint8_t>& tmp) {
  const T eps = static_cast<T>(t.eps);
  if (t.tmp) GroupNorm<T, reuse>(y, m, v, x, g, b, tmp, eps, gt);  // GN:call
  else GroupNorm<T, reuse>(y, m, v, x, g, b, eps, gt);
}

// in: N*C*hwAlign x (padded), C gamma, C beta; out: N*C*hwAlign y, N*G mean, N*G variance
extern "C" __global__ __aicore__ void gn_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(GnCase, t, tiling);
  GroupNormTiling gt = t.tiling;
  TPipe pipe;
  const uint32_t total = gt.n * gt.c * gt.hwAlignSize, C = gt.c, NG = gt.n * gt.g;
  // at least one block each: an unfilled (all-zero) tiling must reach GroupNorm's own check
  const uint32_t ta = (total + 16) / 16 * 16, ca = (C + 16) / 16 * 16, ga = (NG + 16) / 16 * 16;
  TBuf<TPosition::VECCALC> bx, by, bg, bb, bm, bv, hx, hy, hg, hb, hm, hv, bt;
  for (auto* q : {&bx, &by}) pipe.InitBuffer(*q, ta * 4);
  for (auto* q : {&hx, &hy}) pipe.InitBuffer(*q, ta * 2);
  for (auto* q : {&bg, &bb}) pipe.InitBuffer(*q, ca * 4);
  for (auto* q : {&hg, &hb}) pipe.InitBuffer(*q, ca * 2);
  for (auto* q : {&bm, &bv}) pipe.InitBuffer(*q, ga * 4);
  for (auto* q : {&hm, &hv}) pipe.InitBuffer(*q, ga * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, total + 2 * C);
  go.SetGlobalBuffer((__gm__ float*)out, total + 2 * NG);
  LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>(), g = bg.Get<float>(), b = bb.Get<float>(),
                     m = bm.Get<float>(), v = bv.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  Duplicate(y, t.fill, ta);  // the output's previous content: defined (GroupNorm may read it, see the header)
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(x, gi, {1, total * 4, 0, 0, 0}, {false, 0, 0, 0});
  DataCopyPad(g, gi[total], {1, C * 4, 0, 0, 0}, {false, 0, 0, 0});
  DataCopyPad(b, gi[total + C], {1, C * 4, 0, 0, 0}, {false, 0, 0, 0});
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> xh = hx.Get<half>(), yh = hy.Get<half>(), gh = hg.Get<half>(), bh = hb.Get<half>(),
                      mh = hm.Get<half>(), vh = hv.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, total);
    Cast(yh, y, RoundMode::CAST_NONE, total);
    Cast(gh, g, RoundMode::CAST_NONE, C);
    Cast(bh, b, RoundMode::CAST_NONE, C);
    PipeBarrier<PIPE_ALL>();
    if (t.reuse) call<half, true>(t, gt, yh, mh, vh, xh, gh, bh, tmp);
    else call<half, false>(t, gt, yh, mh, t.alias ? mh : vh, xh, gh, bh, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(y, yh, RoundMode::CAST_NONE, total);
    Cast(m, mh, RoundMode::CAST_NONE, NG);
    Cast(v, vh, RoundMode::CAST_NONE, NG);
    PipeBarrier<PIPE_ALL>();
  } else {
    if (t.reuse) call<float, true>(t, gt, y, m, v, x, g, b, tmp);
    else call<float, false>(t, gt, y, m, t.alias ? m : v, x, g, b, tmp);
    PipeBarrier<PIPE_ALL>();
  }
  const uint32_t from = t.alias == 2 ? gt.inputRoundSize : 0;
  if (t.alias >= 2) DataCopyPad(go, x[from], {1, (total - from) * 4, 0, 0, 0});
  else DataCopyPad(go, y, {1, total * 4, 0, 0, 0});
  DataCopyPad(go[total], m, {1, NG * 4, 0, 0, 0});
  DataCopyPad(go[total + NG], v, {1, NG * 4, 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, gn_call, 3);
}
