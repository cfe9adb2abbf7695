// Sum (lib/reduce/sum.h): each row's sum of an [outter, inner] tensor over n, with and without sharedTmpBuffer,
// half and float; row 0 also through the count-form ReduceSum, which Sum must equal bit for bit.
#include "opkit_emu/pybind.h"
#include "adv_api/reduce/sum.h"  // CANN's include path resolves (kernel_operator.h already has the family)

using namespace AscendC;

struct SumTiling {
  uint32_t outter, inner, n, tmp, isHalf;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
};

template <class T>
void run(const LocalTensor<T>& x, const LocalTensor<T>& d, const LocalTensor<T>& r, const LocalTensor<T>& w,
         const LocalTensor<uint8_t>& tmp, const SumTiling& t) {
  SumParams p{t.outter, t.inner, t.n};
  if (t.tmp) Sum<T>(d, x, tmp, p);  // SUM:call
  else Sum(d, x, p);
  ReduceSum(r, x, w, static_cast<int32_t>(t.n));
}

// x: outter x inner floats; out: [0, outter) the sums, [outter] ReduceSum of row 0
extern "C" __global__ __aicore__ void sum_call(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SumTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bh, bd, br, bw, bt, bo;
  const uint32_t total = t.outter * t.inner;
  pipe.InitBuffer(bx, total * 4);
  pipe.InitBuffer(bh, total * 2 + 32);
  pipe.InitBuffer(bd, (t.outter * 4 + 31) / 32 * 32);
  pipe.InitBuffer(br, 32);
  pipe.InitBuffer(bw, t.inner * 4 + 256);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(bo, ((t.outter + 1) * 4 + 31) / 32 * 32);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, total);
  go.SetGlobalBuffer((__gm__ float*)out, t.outter + 1);
  LocalTensor<float> fx = bx.Get<float>(), o = bo.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, total);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh.Get<half>(), hd = bd.Get<half>(), hr = br.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, total);
    PipeBarrier<PIPE_ALL>();
    run<half>(hx, hd, hr, bw.Get<half>(), tmp, t);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t i = 0; i < t.outter; ++i) o.SetValue(i, static_cast<float>(hd.GetValue(i)));
    o.SetValue(t.outter, static_cast<float>(hr.GetValue(0)));
  } else {
    LocalTensor<float> fd = bd.Get<float>(), fr = br.Get<float>();
    run<float>(fx, fd, fr, bw.Get<float>(), tmp, t);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t i = 0; i < t.outter; ++i) o.SetValue(i, fd.GetValue(i));
    o.SetValue(t.outter, fr.GetValue(0));
  }
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(go, o, {1, static_cast<uint32_t>((t.outter + 1) * 4), 0, 0, 0});
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, sum_call, 3);
}
