// TransData (lib/transpose/transdata.h): the four A2 format pairs on half, the layouts built with MakeLayout /
// MakeShape / MakeStride as CANN's sample builds them (test_transdata.py).
#include "opkit_emu/pybind.h"
#include "adv_api/transpose/transdata.h"  // CANN's include path resolves

using namespace AscendC;

constexpr TransDataConfig kToFz = {DataFormat::NCDHW, DataFormat::FRACTAL_Z_3D};
constexpr TransDataConfig kFromFz = {DataFormat::FRACTAL_Z_3D, DataFormat::NCDHW};
constexpr TransDataConfig kTo6hd = {DataFormat::NCDHW, DataFormat::NDC1HWC0};
constexpr TransDataConfig kFrom6hd = {DataFormat::NDC1HWC0, DataFormat::NCDHW};

struct TdCase {
  uint32_t mode, n, c, d, h, w, nSrc, nDst, nOut, tmp;  // mode as CANN's sample: 1 to FZ3D, 2 from, 3 to 6HD, 4 from
  uint32_t whole;  // 1: an NCDHW result copied out with its rows' pad lanes
};

// in: nSrc halves; out: nOut halves (an NCDHW result of nDst padded halves leaves its rows' pad lanes out:
// DataCopyPad row by row)
extern "C" __global__ __aicore__ void td_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(TdCase, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, by, bt;
  const uint32_t sa = (t.nSrc + 15) / 16 * 16, da = (t.nDst + 15) / 16 * 16, oa = (t.nOut + 15) / 16 * 16;
  pipe.InitBuffer(bx, sa * 2);
  pipe.InitBuffer(by, da * 2);
  pipe.InitBuffer(bt, t.tmp);
  GlobalTensor<half> gi, go;
  gi.SetGlobalBuffer((__gm__ half*)in, sa);
  go.SetGlobalBuffer((__gm__ half*)out, oa);
  LocalTensor<half> x = bx.Get<half>(), y = by.Get<half>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
  DataCopy(x, gi, sa);
  PipeBarrier<PIPE_ALL>();
  const int32_t n = t.n, c = t.c, d = t.d, h = t.h, w = t.w, c1 = (c + 15) / 16, n1 = (n + 15) / 16;
  auto ncdhw = MakeLayout(MakeShape(n, c, d, h, w), MakeStride());
  auto hd6 = MakeLayout(MakeShape(n, d, c1, h, w, 16), MakeStride());
  auto fz = MakeLayout(MakeShape(d, c1, h, w, n1, 16, 16), MakeStride());
  if (t.mode == 1) TransData<kToFz>(y, x, tmp, TransDataParams<decltype(ncdhw), decltype(fz)>{ncdhw, fz});  // TD:call
  else if (t.mode == 2) TransData<kFromFz>(y, x, tmp, TransDataParams<decltype(fz), decltype(ncdhw)>{fz, ncdhw});
  else if (t.mode == 3) TransData<kTo6hd>(y, x, tmp, TransDataParams<decltype(ncdhw), decltype(hd6)>{ncdhw, hd6});
  else TransData<kFrom6hd>(y, x, tmp, TransDataParams<decltype(hd6), decltype(ncdhw)>{hd6, ncdhw});
  PipeBarrier<PIPE_ALL>();
  if ((t.mode == 2 || t.mode == 4) && !t.whole) {
    DataCopyExtParams p{static_cast<uint16_t>(n * c * d), static_cast<uint32_t>(h * w * 2), 0, 0, 0};
    DataCopyPad(go, y, p);
  } else {
    DataCopy(go, y, da);
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, td_call, 3);
}
