// RmsNorm (lib/normalization/rmsnorm.h): [B, S, H] half and float, the sharedTmpBuffer and framework forms, the
// tiling from the host (test_rmsnorm.py fills it as GetRmsNormTilingInfo does) and compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/rmsnorm.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"     // RmsNormTiling, as a kernel's generated tiling header brings it

using namespace AscendC;

struct RmsCase {
  uint32_t isHalf, tmp;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  float eps;
  RmsNormTiling tiling;
};

// x: B*S*H floats then H gamma floats; out: B*S*H floats
extern "C" __global__ __aicore__ void rms_call(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RmsCase, t, tiling);
  const RmsNormTiling& rt = t.tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bg, bh, bhg, bd, bt;
  const uint32_t H = rt.hLength, total = rt.bLength * rt.sLength * H;
  pipe.InitBuffer(bx, total * 4);
  pipe.InitBuffer(bg, H * 4);
  pipe.InitBuffer(bh, total * 2);
  pipe.InitBuffer(bhg, H * 2);
  pipe.InitBuffer(bd, total * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, total + H);
  go.SetGlobalBuffer((__gm__ float*)out, total);
  LocalTensor<float> fx = bx.Get<float>(), fg = bg.Get<float>(), fd = bd.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, total);
  DataCopy(fg, gx[total], H);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh.Get<half>(), hg = bhg.Get<half>(), hd = bd.Get<half>(total);
    Cast(hx, fx, RoundMode::CAST_NONE, total);
    Cast(hg, fg, RoundMode::CAST_NONE, H);
    PipeBarrier<PIPE_ALL>();
    if (t.tmp) RmsNorm<half>(hd, hx, hg, tmp, static_cast<half>(t.eps), rt);  // RMS:call
    else RmsNorm(hd, hx, hg, static_cast<half>(t.eps), rt);
    PipeBarrier<PIPE_ALL>();
    Cast(fx, hd, RoundMode::CAST_NONE, total);
    PipeBarrier<PIPE_ALL>();
    DataCopy(go, fx, total);
  } else {
    if (t.tmp) RmsNorm<float>(fd, fx, fg, tmp, t.eps, rt);
    else RmsNorm(fd, fx, fg, t.eps, rt);
    PipeBarrier<PIPE_ALL>();
    DataCopy(go, fd, total);
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, rms_call, 3);
}
