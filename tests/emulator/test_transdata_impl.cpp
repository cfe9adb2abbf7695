// TransDataTo5HDImpl (transpose.h): CANN's implementation function over __ubuf__ pointer lists and uint64_t address
// lists. test_transdata_impl.py checks it against a NumPy transpose.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// x: 16 x 16 int16; y: the 16 x 16 result (dst block j = the j-th element of every source block).
// form[0]: 0 the pointer lists, 1 the address lists, 2 a pointer list whose first entry lies outside UB.
extern "C" __global__ __aicore__ void transdata_impl(GM_ADDR x, GM_ADDR y, GM_ADDR form) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> bs, bd;
  pipe.InitBuffer(bs, 512);
  pipe.InitBuffer(bd, 512);
  LocalTensor<int16_t> s = bs.Get<int16_t>(), d = bd.Get<int16_t>();
  GlobalTensor<int16_t> gx, gy;
  gx.SetGlobalBuffer((__gm__ int16_t*)x, 256);
  gy.SetGlobalBuffer((__gm__ int16_t*)y, 256);
  DataCopy(s, gx, 256);
  PipeBarrier<PIPE_ALL>();
  __ubuf__ int16_t* src[16];
  __ubuf__ int16_t* dst[16];
  uint64_t srcA[16], dstA[16];
  for (int i = 0; i < 16; ++i) {
    src[i] = s.GetPhyAddr() + 16 * i;
    dst[i] = d.GetPhyAddr() + 16 * i;
    srcA[i] = reinterpret_cast<uint64_t>(src[i]);
    dstA[i] = reinterpret_cast<uint64_t>(dst[i]);
  }
  TransDataTo5HDParams p;
  p.repeatTimes = 1;
  const uint32_t f = ((__gm__ uint32_t*)form)[0];
  int16_t outside[16];
  if (f == 2) src[0] = outside;
  if (f == 1) TransDataTo5HDImpl<int16_t>(dstA, srcA, p);
  else TransDataTo5HDImpl(dst, src, p);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, d, 256);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, transdata_impl, 3);
}
