// CreateVecIndex, count form (opkit_emu/vec_index.h): dst[i] = first + i, rounded to T.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// out: 300 float (first 2.5), then 300 int32 (first -7) as int bits, then 300 half (first 2040) cast to float
extern "C" __global__ __aicore__ void vec_index(GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> bf, bi, bh, bc;
  pipe.InitBuffer(bf, 320 * 4);
  pipe.InitBuffer(bi, 320 * 4);
  pipe.InitBuffer(bh, 320 * 2);
  pipe.InitBuffer(bc, 320 * 4);
  GlobalTensor<float> go;
  go.SetGlobalBuffer((__gm__ float*)out, 3 * 320);
  LocalTensor<float> f = bf.Get<float>(), c = bc.Get<float>();
  LocalTensor<int32_t> i = bi.Get<int32_t>();
  LocalTensor<half> h = bh.Get<half>();
  Duplicate(f, 0.0f, 320);
  Duplicate(i, 0, 320);
  Duplicate(c, 0.0f, 320);
  CreateVecIndex(f, 2.5f, 300);
  CreateVecIndex(i, -7, 300);
  CreateVecIndex(h, half(2040.0f), 320);
  Cast(c, h, RoundMode::CAST_NONE, 320);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, f, 320);
  DataCopy(go[320], i.ReinterpretCast<float>(), 320);
  DataCopy(go[640], c, 320);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, vec_index, 1);
}
