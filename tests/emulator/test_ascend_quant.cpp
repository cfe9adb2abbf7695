// AscendQuant (lib/quantization/ascend_quant.h): per tensor, per channel with a scalar offset and with an offset
// tensor, half and float sources, the sharedTmpBuffer and framework forms. test_ascend_quant.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/quantization/ascend_quant.h"  // CANN's include path resolves

using namespace AscendC;

struct QuantTiling {
  uint32_t n, channels, mode, isHalf, tmp;  // mode 0 per tensor, 1 scale tensor + scalar offset, 2 both tensors
  float scale, offset;                      // per tensor (mode 0) / the scalar offset (mode 1)
};

template <class T>
void run(const LocalTensor<int8_t>& d, const LocalTensor<T>& x, const LocalTensor<T>& s, const LocalTensor<T>& o,
         const LocalTensor<uint8_t>& tmp, const QuantTiling& t) {
  if (t.mode == 0 && t.tmp) AscendQuant<T>(d, x, tmp, t.scale, t.offset, t.n);  // AQ:call
  else if (t.mode == 0) AscendQuant<T>(d, x, t.scale, t.offset, t.n);
  else if (t.mode == 1 && t.tmp) AscendQuant<T>(d, x, tmp, s, static_cast<T>(t.offset), t.channels, t.n);
  else if (t.mode == 1) AscendQuant<T>(d, x, s, static_cast<T>(t.offset), t.channels, t.n);
  else if (t.tmp) AscendQuant<T>(d, x, tmp, s, o, t.channels, t.channels, t.n);
  else AscendQuant<T>(d, x, s, o, t.channels, t.channels, t.n);
}

// x: n floats; so: channels scales then channels offsets (float); out: n int8 then the scale tensor's first
// 2 x channels bytes after the call
extern "C" __global__ __aicore__ void quant_call(GM_ADDR x, GM_ADDR so, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(QuantTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bh, bs, bo, bd, bt;
  const uint32_t cb = ((t.channels ? t.channels : 1) * 4 + 31) / 32 * 32, ob = (t.n + 31) / 32 * 32 + cb;
  pipe.InitBuffer(bx, t.n * 4);
  pipe.InitBuffer(bh, t.n * 2);
  pipe.InitBuffer(bs, cb * 2);
  pipe.InitBuffer(bo, cb * 2);
  pipe.InitBuffer(bd, ob);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gx, gs;
  GlobalTensor<uint8_t> go;
  gx.SetGlobalBuffer((__gm__ float*)x, t.n);
  gs.SetGlobalBuffer((__gm__ float*)so, cb / 2);
  go.SetGlobalBuffer((__gm__ uint8_t*)out, ob);
  LocalTensor<float> fx = bx.Get<float>(), fs = bs.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32), od = bd.Get<uint8_t>();
  LocalTensor<int8_t> d = od.ReinterpretCast<int8_t>();
  DataCopy(fx, gx, t.n);
  DataCopy(fs, gs, cb / 2);
  Duplicate(od.ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(ob / 2));
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh.Get<half>(), hs = bo.Get<half>(), ho = hs[cb / 2];
    Cast(hx, fx, RoundMode::CAST_NONE, t.n);
    Cast(hs, fs, RoundMode::CAST_NONE, cb / 4);
    Cast(ho, fs[cb / 4], RoundMode::CAST_NONE, cb / 4);
    PipeBarrier<PIPE_ALL>();
    run<half>(d, hx, hs, ho, tmp, t);
  } else {
    LocalTensor<float> s = fs, o = fs[cb / 4];
    run<float>(d, fx, s, o, tmp, t);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, od, ob - cb);
  DataCopy(go[ob - cb], fs.ReinterpretCast<uint8_t>(), cb);  // the float scale tensor after the call
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, quant_call, 4);
}
