// Select mode 1 in its register form, Select(dst, selMask, src0, repeatTime, repeatParams) (compare_select.h):
// the scalar src1 from SetCmpMask's tensor, the lanes from SetVectorMask. test_select_scalar_reg.py compares with
// torch.where.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// x0: 128 floats (two repeats); bits: 32 bytes of selMask; scal: 8 floats, the first is src1; mode: [lanes per
// repeat, set the register from scal (1) or leave it unset (0)]; out: 128 floats, first -7 (masked-off lanes keep it).
extern "C" __global__ __aicore__ void sel_scalar(GM_ADDR x0, GM_ADDR bits, GM_ADDR scal, GM_ADDR out, GM_ADDR mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bm, bs, bd;
  pipe.InitBuffer(ba, 512);
  pipe.InitBuffer(bm, 32);
  pipe.InitBuffer(bs, 32);
  pipe.InitBuffer(bd, 512);
  LocalTensor<float> a = ba.Get<float>(), s = bs.Get<float>(), d = bd.Get<float>();
  LocalTensor<uint8_t> m = bm.Get<uint8_t>();
  GlobalTensor<float> g0, gs, go;
  GlobalTensor<uint8_t> gm;
  g0.SetGlobalBuffer((__gm__ float*)x0, 128);
  gm.SetGlobalBuffer((__gm__ uint8_t*)bits, 32);
  gs.SetGlobalBuffer((__gm__ float*)scal, 8);
  go.SetGlobalBuffer((__gm__ float*)out, 128);
  const uint32_t lanes = ((__gm__ uint32_t*)mode)[0], setReg = ((__gm__ uint32_t*)mode)[1];
  DataCopy(a, g0, 128);
  DataCopy(m, gm, 32);
  DataCopy(s, gs, 8);
  Duplicate(d, -7.0f, 128);
  PipeBarrier<PIPE_ALL>();
  if (setReg) SetCmpMask(s);  // mode 1: SetCmpMask takes the src1 tensor (SetCmpMask(ISASI).md)
  SetVectorMask<float>(0, (lanes >= 64 ? ~0ull : (1ull << lanes) - 1));
  PipeBarrier<PIPE_V>();
  Select(d, m, a, 2, {1, 1, 1, 8, 8, 8});
  ResetMask();
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, 128);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, sel_scalar, 5);
}
