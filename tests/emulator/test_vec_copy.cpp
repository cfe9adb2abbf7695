// Copy, UB to UB on the vector unit, level-0 (opkit_emu/vec_copy.h): mask, repeats and CopyRepeatParams strides.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// x: 512 floats; out: 512 floats. mode 0: 3 repeats of 40 lanes, src repeats 8 blocks apart, dst 5 blocks apart;
// mode 1: bit mask of the even lanes, 2 repeats; mode 2: copies lanes nothing wrote (poison reaches GM)
extern "C" __global__ __aicore__ void vec_copy(GM_ADDR x, GM_ADDR out, GM_ADDR mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> bs, bd;
  pipe.InitBuffer(bs, 512 * 4);
  pipe.InitBuffer(bd, 512 * 4);
  GlobalTensor<float> gx, go;
  GlobalTensor<int32_t> gm;
  gx.SetGlobalBuffer((__gm__ float*)x, 512);
  go.SetGlobalBuffer((__gm__ float*)out, 512);
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t m = gm.GetValue(0);
  LocalTensor<float> s = bs.Get<float>(), d = bd.Get<float>();
  DataCopy(s, gx, m == 2 ? 64 : 512);
  Duplicate(d, -1.0f, 512);
  PipeBarrier<PIPE_ALL>();
  if (m == 0) {
    Copy(d, s, 40, 3, {1, 1, 5, 8});
  } else if (m == 1) {
    const uint64_t even[2] = {0x5555555555555555ull, 0};
    Copy(d, s, even, 2, CopyRepeatParams{});
  } else {
    Copy(d, s, 64, 2, CopyRepeatParams{});
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, 512);  // COPY:out
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, vec_copy, 3);
}
