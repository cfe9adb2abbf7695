// Normalize (lib/normalization/normalize.h): [A, R padded] rows normalized on given mean / variance, T / U float /
// float, half / half, half / float, config NLCFG_NORM and NLCFG_NOBETA, with and without sharedTmpBuffer;
// test_normalize.py checks them against PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/normalize.h"  // CANN's include path resolves

using namespace AscendC;

struct NmCase {
  uint32_t mode, tmp, noBeta;  // mode 0: float / float, 1: half / half, 2: half / float; tmp: 0 = framework form
  uint32_t a, r, w;            // aLength, rLength, rLengthWithPadding
  uint32_t keepPad;            // 1: copy the output's padding columns out as Normalize left them
  float eps;
};

constexpr NormalizeConfig kRaCfg = {ReducePattern::RA, -1, false, false, false};  // noBeta 2: refused (AR only)

template <class U, class T>
__aicore__ inline void call(const NmCase& t, const LocalTensor<T>& y, const LocalTensor<float>& rstd,
                            const LocalTensor<float>& mean, const LocalTensor<float>& var, const LocalTensor<T>& x,
                            const LocalTensor<U>& g, const LocalTensor<U>& b, const LocalTensor<uint8_t>& tmp) {
  const NormalizePara p = {t.a, t.r, t.w};
  if (t.noBeta == 2) {
    Normalize<U, T, false, kRaCfg>(y, rstd, mean, var, x, g, b, tmp, t.eps, p);
  } else if (t.noBeta) {
    Normalize<U, T, false, NLCFG_NOBETA>(y, rstd, mean, var, x, g, b, tmp, t.eps, p);
  } else if (t.tmp) {
    Normalize<U, T>(y, rstd, mean, var, x, g, b, tmp, t.eps, p);  // NM:call
  } else {
    Normalize<U, T>(y, rstd, mean, var, x, g, b, t.eps, p);
  }
}

// in (floats): A x W x, W gamma, W beta, A mean, A variance (A padded to 8); out: A x W y (as float), A rstd
extern "C" __global__ __aicore__ void nm_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(NmCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.a * t.w, a8 = (t.a + 7) / 8 * 8, all = n + 2 * t.w + 2 * a8;
  TBuf<TPosition::VECCALC> bi, bh, bo, bt;
  pipe.InitBuffer(bi, all * 4);
  pipe.InitBuffer(bh, (n + 2 * t.w) * 2 + 64);
  pipe.InitBuffer(bo, (n + a8) * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, all);
  go.SetGlobalBuffer((__gm__ float*)out, n + a8);
  LocalTensor<float> f = bi.Get<float>(), o = bo.Get<float>();
  LocalTensor<float> x = f, g = f[n], b = f[n + t.w], mean = f[n + 2 * t.w], var = f[n + 2 * t.w + a8];
  LocalTensor<float> rstd = o[n];
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(f, gi, all);
  PipeBarrier<PIPE_ALL>();
  if (t.mode == 0) {
    call<float, float>(t, o, rstd, mean, var, x, g, b, tmp);
  } else {
    LocalTensor<half> h = bh.Get<half>(), hx = h, hg = h[n], hb = h[n + t.w], hy = bi.Get<half>();
    Cast(h, f, RoundMode::CAST_NONE, n + 2 * t.w);
    PipeBarrier<PIPE_ALL>();
    if (t.mode == 1) {
      call<half, half>(t, hy, rstd, mean, var, hx, hg, hb, tmp);
    } else {
      call<float, half>(t, hy, rstd, mean, var, hx, g, b, tmp);
    }
    PipeBarrier<PIPE_ALL>();
    Cast(o, hy, RoundMode::CAST_NONE, n);
  }
  PipeBarrier<PIPE_ALL>();
  for (uint32_t i = t.a; i < a8; ++i) o.SetValue(n + i, 0.0f);
  for (uint32_t i = 0; i < t.a && !t.keepPad; ++i)  // the padding columns are not defined: zero them
    for (uint32_t j = t.r; j < t.w; ++j) o.SetValue(i * t.w + j, 0.0f);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, o, n + a8);  // NM:out
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, nm_call, 3);
}
