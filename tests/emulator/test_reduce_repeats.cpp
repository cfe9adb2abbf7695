// ReduceSum / ReduceMax / ReduceMin, level-0 form (opkit_emu/reduce_repeats.h): mask + repeatTime +
// srcRepStride over src, one value (max/min: and its index) into dst; more than 255 repeats allowed.
#include "opkit_emu/pybind.h"

using namespace AscendC;

struct RrTiling {
  int32_t op;       // 0 sum, 1 max with index, 2 min with index, 3 sum over a half source
  int32_t mask;     // continuous mask (lanes per repeat); -1: bit mask {0x5555..., 0x5555...} (every other lane)
  int32_t repeats;
  int32_t srcRepStride;
  int32_t loaded;   // elements copied in (the rest of src stays unwritten: poison)
};

// x: 8192 floats; out[0] value, out[1] index bits (as float storage)
extern "C" __global__ __aicore__ void reduce_repeats(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RrTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bs, bd, bt;
  pipe.InitBuffer(bs, 8192 * 4);
  pipe.InitBuffer(bd, 64);
  pipe.InitBuffer(bt, 8192 * 4);
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, 8192);
  go.SetGlobalBuffer((__gm__ float*)out, 8);
  LocalTensor<float> s = bs.Get<float>(), d = bd.Get<float>(), tmp = bt.Get<float>();
  DataCopy(s, gx, t.loaded);
  Duplicate(d, 0.0f, 8);
  PipeBarrier<PIPE_ALL>();
  const uint64_t bits[2] = {0x5555555555555555ull, 0x5555555555555555ull};
  if (t.op == 3) {
    LocalTensor<half> h = bt.Get<half>(), dh = bd.Get<half>(), th = bt.Get<half>()[8192];
    Cast(h, s, RoundMode::CAST_NONE, t.loaded);
    ReduceSum(dh, h, th, t.mask, t.repeats, t.srcRepStride);
    Cast(d, dh, RoundMode::CAST_NONE, 8);
  } else if (t.op == 0) {
    if (t.mask < 0) ReduceSum(d, s, tmp, bits, t.repeats, t.srcRepStride);
    else ReduceSum(d, s, tmp, t.mask, t.repeats, t.srcRepStride);
  } else if (t.op == 1) {
    ReduceMax(d, s, tmp, t.mask, t.repeats, t.srcRepStride, true);
  } else {
    ReduceMin(d, s, tmp, t.mask, t.repeats, t.srcRepStride, true);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, 8);  // REDUCE:out
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, reduce_repeats, 3);
}
