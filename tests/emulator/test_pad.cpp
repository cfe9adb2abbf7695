// Pad / UnPad (lib/pad/pad.h): half and float, the aligned and unaligned Pad cases, with and without
// sharedTmpBuffer, on the tiling the host stand-in's PadTilingFunc / UnPadTilingFunc fill (test_pad.py).
#include "opkit_emu/pybind.h"
#include "adv_api/pad/kernel_operator_pad_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct PdCase {
  uint32_t isHalf, unpad, tmp, H, W, Wout, left, right;  // tmp: sharedTmpBuffer bytes, 0 = the form without it
  int32_t padValue;
  PadTiling pad;
  UnPadTiling unp;
};

template <class T>
__aicore__ inline void call(const PdCase& t, const LocalTensor<T>& y, const LocalTensor<T>& x,
                            LocalTensor<uint8_t>& tmp) {
  PdCase c = t;
  if (t.unpad) {
    UnPadParams p(static_cast<uint16_t>(t.left), static_cast<uint16_t>(t.right));
    if (t.tmp) UnPad(y, x, p, tmp, c.unp);  // PD:call
    else UnPad(y, x, p, c.unp);
  } else {
    PadParams p(static_cast<uint16_t>(t.left), static_cast<uint16_t>(t.right), t.padValue);
    if (t.tmp) Pad(y, x, p, tmp, c.pad);
    else Pad(y, x, p, c.pad);
  }
}

// in: H*W floats (as T after a cast); out: H*Wout floats (dst preset to -1)
extern "C" __global__ __aicore__ void pd_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(PdCase, t, tiling);
  TPipe pipe;
  const uint32_t nin = t.H * t.W, nout = t.H * t.Wout, ia = (nin + 15) / 16 * 16, oa = (nout + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bx, by, hx, hy, bt;
  pipe.InitBuffer(bx, ia * 4);
  pipe.InitBuffer(by, oa * 4);
  pipe.InitBuffer(hx, ia * 2);
  pipe.InitBuffer(hy, oa * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, ia);
  go.SetGlobalBuffer((__gm__ float*)out, oa);
  LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, ia);
  Duplicate(y, -1.0f, oa);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> xh = hx.Get<half>(), yh = hy.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, ia);
    Cast(yh, y, RoundMode::CAST_NONE, oa);
    PipeBarrier<PIPE_ALL>();
    call<half>(t, yh, xh, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(y, yh, RoundMode::CAST_NONE, oa);
  } else {
    call<float>(t, y, x, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, y, oa);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, pd_call, 3);
}
