// CumSum (lib/math/cumsum.h): last axis and first axis, half and float, the sharedTmpBuffer and framework forms,
// outputLastRow. test_cumsum.py compares with PyTorch's cumsum.
#include "opkit_emu/pybind.h"
#include "adv_api/math/cumsum.h"  // CANN's include path resolves (kernel_operator.h already has the family)

using namespace AscendC;

struct CumTiling {
  uint32_t outter, inner, lastAxis, isHalf, tmp;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  uint32_t lastRowSize;                           // elements of lastRowTensor
};

constexpr CumSumConfig kLast{true, false, true};
constexpr CumSumConfig kFirst{false, false, true};

template <class T, const CumSumConfig& cfg>
void run(LocalTensor<T>& d, LocalTensor<T>& l, const LocalTensor<T>& x, LocalTensor<uint8_t>& tmp, const CumTiling& t) {
  const CumSumInfo info{t.outter, t.inner};
  if (t.tmp) CumSum<T, cfg>(d, l, x, tmp, info);  // CUMSUM:call
  else CumSum<T, cfg>(d, l, x, info);
}

// x: outter x inner floats; out: the outter x inner running sums, then the inner of lastRowTensor (as float)
extern "C" __global__ __aicore__ void cumsum_call(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CumTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bh, bd, bl, bt, bo;
  const uint32_t total = t.outter * t.inner, outn = total + t.inner;
  pipe.InitBuffer(bx, total * 4);
  pipe.InitBuffer(bh, total * 2);
  pipe.InitBuffer(bd, total * 4);
  pipe.InitBuffer(bl, (t.lastRowSize * 4 + 31) / 32 * 32);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(bo, outn * 4);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, total);
  go.SetGlobalBuffer((__gm__ float*)out, outn);
  LocalTensor<float> fx = bx.Get<float>(), o = bo.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, total);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh.Get<half>(), hd = bd.Get<half>(total), hl = bl.Get<half>(t.lastRowSize);
    Cast(hx, fx, RoundMode::CAST_NONE, total);
    PipeBarrier<PIPE_ALL>();
    if (t.lastAxis) run<half, kLast>(hd, hl, hx, tmp, t);
    else run<half, kFirst>(hd, hl, hx, tmp, t);
    PipeBarrier<PIPE_ALL>();
    Cast(o, hd, RoundMode::CAST_NONE, total);
    Cast(o[total], hl, RoundMode::CAST_NONE, t.inner);
  } else {
    LocalTensor<float> fd = bd.Get<float>(), fl = bl.Get<float>(t.lastRowSize);
    if (t.lastAxis) run<float, kLast>(fd, fl, fx, tmp, t);
    else run<float, kFirst>(fd, fl, fx, tmp, t);
    PipeBarrier<PIPE_ALL>();
    Adds(o, fd, 0.0f, total);
    Adds(o[total], fl, 0.0f, t.inner);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, o, outn);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, cumsum_call, 3);
}
