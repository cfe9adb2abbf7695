// BatchNorm (lib/normalization/batchnorm.h): [B, S, H] half and float, the sharedTmpBuffer and framework forms,
// isBasicBlock, on the tiling the host stand-in's GetBatchNormNDTilingInfo fills (test_batchnorm.py), compared with
// PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/kernel_operator_batchnorm_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct BnCase {
  uint32_t isHalf, tmp, reuse, basic, gexact;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  uint32_t alias;  // 1: outputVariance is outputMean (refused), 2: output is inputX (in place, BatchNorm.md allows),
                   // float only: 3 outputVariance is output[8] (a partial overlap), 4 output's first SH floats
  float eps;                                   // gexact: gamm / beta hold exactly B elements
  BatchNormTiling tiling;
};

template <class T, bool reuse, bool basic>
__aicore__ inline void call(const BnCase& t, BatchNormTiling& bt, const LocalTensor<T>& y, const LocalTensor<T>& m,
                            const LocalTensor<T>& v, const LocalTensor<T>& x, const LocalTensor<T>& g,
                            const LocalTensor<T>& b, const LocalTensor<uint8_t>& tmp) {
  const T eps = static_cast<T>(t.eps);
  if (t.tmp) BatchNorm<T, reuse, basic>(y, m, v, x, g, b, tmp, eps, bt);  // BN:call
  else BatchNorm<T, reuse, basic>(y, m, v, x, g, b, eps, bt);
}

template <class T>
__aicore__ inline void dispatch(const BnCase& t, BatchNormTiling& bt, const LocalTensor<T>& y, const LocalTensor<T>& m,
                                const LocalTensor<T>& v, const LocalTensor<T>& x, const LocalTensor<T>& g,
                                const LocalTensor<T>& b, const LocalTensor<uint8_t>& tmp) {
  if (t.reuse) call<T, true, false>(t, bt, y, m, v, x, g, b, tmp);
  else if (t.basic) call<T, false, true>(t, bt, y, m, v, x, g, b, tmp);
  else call<T, false, false>(t, bt, y, m, v, x, g, b, tmp);
}

// in: B*SH x, B gamma, B beta; out: B*SH y, SH mean, SH variance
extern "C" __global__ __aicore__ void bn_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(BnCase, t, tiling);
  BatchNormTiling bt = t.tiling;
  TPipe pipe;
  const uint32_t B = bt.originalBLength, SH = bt.meanVarSize, total = B * SH, ba = (B + 15) / 16 * 16;
  const uint32_t sa = (SH + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bx, by, bg, bb, bm, bv, hx, hy, hg, hb, hm, hv, bt0;
  for (auto* q : {&bx, &by}) pipe.InitBuffer(*q, total * 4);
  for (auto* q : {&hx, &hy}) pipe.InitBuffer(*q, (total + 15) / 16 * 32);
  for (auto* q : {&bg, &bb}) pipe.InitBuffer(*q, ba * 4);
  for (auto* q : {&hg, &hb}) pipe.InitBuffer(*q, ba * 2);
  for (auto* q : {&bm, &bv}) pipe.InitBuffer(*q, sa * 4);
  for (auto* q : {&hm, &hv}) pipe.InitBuffer(*q, sa * 2);
  pipe.InitBuffer(bt0, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, total + 2 * B);
  go.SetGlobalBuffer((__gm__ float*)out, total + 2 * SH);
  const uint32_t gn = t.gexact ? B : ba;
  LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>(), g = bg.Get<float>(), b = bb.Get<float>(),
                     m = bm.Get<float>(), v = bv.Get<float>();
  LocalTensor<uint8_t> tmp = bt0.Get<uint8_t>(t.tmp ? t.tmp : 32);
  Duplicate(g, 0.0f, ba);
  Duplicate(b, 0.0f, ba);
  PipeBarrier<PIPE_ALL>();
  DataCopy(x, gi, total);
  DataCopyPad(g, gi[total], {1, B * 4, 0, 0, 0}, {false, 0, 0, 0});
  DataCopyPad(b, gi[total + B], {1, B * 4, 0, 0, 0}, {false, 0, 0, 0});
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> xh = hx.Get<half>(), yh = hy.Get<half>(), gh = hg.Get<half>(gn), bh = hb.Get<half>(gn),
                      mh = hm.Get<half>(), vh = hv.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, total);
    Cast(gh, g, RoundMode::CAST_NONE, ba);
    Cast(bh, b, RoundMode::CAST_NONE, ba);
    PipeBarrier<PIPE_ALL>();
    dispatch<half>(t, bt, t.alias == 2 ? xh : yh, mh, t.alias == 1 ? mh : vh, xh, gh, bh, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(y, t.alias == 2 ? xh : yh, RoundMode::CAST_NONE, total);
    Cast(m, mh, RoundMode::CAST_NONE, SH);
    Cast(v, vh, RoundMode::CAST_NONE, SH);
    PipeBarrier<PIPE_ALL>();
  } else {
    LocalTensor<float> gf = bg.Get<float>(gn), bf = bb.Get<float>(gn);
    const LocalTensor<float> vv = t.alias == 1 ? m : t.alias == 3 ? y[8] : t.alias == 4 ? by.Get<float>(SH) : v;
    dispatch<float>(t, bt, t.alias == 2 ? x : y, m, vv, x, gf, bf, tmp);
    PipeBarrier<PIPE_ALL>();
  }
  DataCopy(go, t.alias == 2 && !t.isHalf ? x : y, total);
  DataCopy(go[total], m, SH);
  DataCopy(go[total + SH], v, SH);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, bn_call, 3);
}
