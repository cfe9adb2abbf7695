// The reductions' result registers (reduce.h): GetReduceRepeatSumSpr / GetAccVal after a count-form ReduceSum,
// GetReduceRepeatMaxMinSpr / GetReduceMaxMinCount after ReduceMax / ReduceMin with the index. test_reduce_spr.py
// compares them with ReduceSum's own dst and with PyTorch.
#include "opkit_emu/pybind.h"

using namespace AscendC;

struct SprTiling {
  uint32_t n;
  uint32_t isHalf;
};

// out (float): [0] ReduceSum's dst, [1] GetReduceRepeatSumSpr<T>, [2] GetAccVal<T>, [3] max value, [4] its index,
// [5] min value (GetReduceMaxMinCount), [6] its index, [7] GetAccVal() untyped bits == [1]'s bits (1 or 0)
template <class T>
void spr(const LocalTensor<T>& x, const LocalTensor<T>& w, const LocalTensor<T>& r, float* o, uint32_t n) {
  ReduceSum(r, x, w, static_cast<int32_t>(n));
  PipeBarrier<PIPE_ALL>();
  o[0] = static_cast<float>(r.GetValue(0));
  const T s = GetReduceRepeatSumSpr<T>();
  o[1] = static_cast<float>(s);
  o[2] = static_cast<float>(GetAccVal<T>());
  const int64_t bits = GetAccVal();
  T fromBits;
  std::memcpy(&fromBits, &bits, sizeof(T));
  o[7] = std::memcmp(&fromBits, &s, sizeof(T)) == 0 ? 1.0f : 0.0f;
  ReduceMax(r, x, w, static_cast<int32_t>(n), true);
  PipeBarrier<PIPE_ALL>();
  T v, i;
  GetReduceRepeatMaxMinSpr<T>(v, i);
  o[3] = static_cast<float>(v);
  uint32_t ib = 0;
  std::memcpy(&ib, &i, sizeof(T));  // the index in T's bit pattern, as CANN reinterprets it
  o[4] = static_cast<float>(ib);
  ReduceMin(r, x, w, static_cast<int32_t>(n), true);
  PipeBarrier<PIPE_ALL>();
  GetReduceMaxMinCount<T>(v, i);
  o[5] = static_cast<float>(v);
  ib = 0;
  std::memcpy(&ib, &i, sizeof(T));
  o[6] = static_cast<float>(ib);
}

extern "C" __global__ __aicore__ void spr_call(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SprTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bh, bw, br, bo;
  pipe.InitBuffer(bx, t.n * 4);
  pipe.InitBuffer(bh, t.n * 2);
  pipe.InitBuffer(bw, t.n * 4);
  pipe.InitBuffer(br, 64);
  pipe.InitBuffer(bo, 32);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, t.n);
  go.SetGlobalBuffer((__gm__ float*)out, 8);
  LocalTensor<float> fx = bx.Get<float>(), o = bo.Get<float>();
  DataCopy(fx, gx, t.n);
  PipeBarrier<PIPE_ALL>();
  float r[8] = {};
  if (t.isHalf) {
    LocalTensor<half> hx = bh.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, t.n);
    PipeBarrier<PIPE_ALL>();
    spr<half>(hx, bw.Get<half>(), br.Get<half>(), r, t.n);
  } else {
    spr<float>(fx, bw.Get<float>(), br.Get<float>(), r, t.n);
  }
  for (int k = 0; k < 8; ++k) o.SetValue(k, r[k]);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, o, 8);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, spr_call, 3);
}
