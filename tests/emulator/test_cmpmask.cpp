// The CmpMask register forms (compare_select.h): Compare into the register, GetCmpMask, SetCmpMask, and
// Select<T, VSEL_CMPMASK_SPR> reading it. test_cmpmask.py compares with PyTorch's where / lt.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// x0, x1: 64 floats; bits: 16 bytes SetCmpMask loads first; when mode[0] == 0, Compare(x0 < x1) then writes the
// register's first mode[1] lanes (continuous mask), else Select runs under a vector mask of mode[1] lanes; out: [0, 64) Select(x0, x1) over an output first set to -7
// (lanes outside the mask keep it), then the 16 register bytes GetCmpMask stores (as 4 floats' bytes).
extern "C" __global__ __aicore__ void cmpmask(GM_ADDR x0, GM_ADDR x1, GM_ADDR bits, GM_ADDR out, GM_ADDR mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bm, bd;
  pipe.InitBuffer(ba, 256);
  pipe.InitBuffer(bb, 256);
  pipe.InitBuffer(bm, 32);
  pipe.InitBuffer(bd, 512);
  LocalTensor<float> a = ba.Get<float>(), b = bb.Get<float>(), d = bd.Get<float>();
  LocalTensor<uint8_t> m = bm.Get<uint8_t>();
  GlobalTensor<float> g0, g1, go;
  GlobalTensor<uint8_t> gm;
  g0.SetGlobalBuffer((__gm__ float*)x0, 64);
  g1.SetGlobalBuffer((__gm__ float*)x1, 64);
  gm.SetGlobalBuffer((__gm__ uint8_t*)bits, 32);
  go.SetGlobalBuffer((__gm__ float*)out, 72);
  const uint32_t setFromTensor = ((__gm__ uint32_t*)mode)[0], lanes = ((__gm__ uint32_t*)mode)[1];
  DataCopy(a, g0, 64);
  DataCopy(b, g1, 64);
  DataCopy(m, gm, 32);
  Duplicate(d, -7.0f, 128);
  PipeBarrier<PIPE_ALL>();
  SetCmpMask(m);  // the register's bits Compare's masked-off lanes leave as they are
  if (setFromTensor) {
    SetVectorMask<float>(0, (lanes >= 64 ? ~0ull : (1ull << lanes) - 1));
  } else {
    Compare(a, b, CMPMODE::LT, static_cast<uint64_t>(lanes), {1, 1, 1, 8, 8, 8});  // leaves its mask in effect
  }
  PipeBarrier<PIPE_V>();
  Select<float, SELMODE::VSEL_CMPMASK_SPR>(d, a, b, 1, {1, 1, 1, 8, 8, 8});
  PipeBarrier<PIPE_V>();
  LocalTensor<uint8_t> dm = d[64].ReinterpretCast<uint8_t>();
  GetCmpMask(dm);
  ResetMask();
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, 72);
}

// dst = a OP b (CANN's comparison operators): 64 floats each, op[0] 0..5 = < > <= >= == !=; out: the 8 mask bytes.
extern "C" __global__ __aicore__ void cmp_operator(GM_ADDR x0, GM_ADDR x1, GM_ADDR out, GM_ADDR op) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bm;
  pipe.InitBuffer(ba, 256);
  pipe.InitBuffer(bb, 256);
  pipe.InitBuffer(bm, 32);
  LocalTensor<float> a = ba.Get<float>(), b = bb.Get<float>();
  LocalTensor<uint8_t> m = bm.Get<uint8_t>();
  GlobalTensor<float> g0, g1;
  GlobalTensor<uint8_t> go;
  g0.SetGlobalBuffer((__gm__ float*)x0, 64);
  g1.SetGlobalBuffer((__gm__ float*)x1, 64);
  go.SetGlobalBuffer((__gm__ uint8_t*)out, 32);
  DataCopy(a, g0, 64);
  DataCopy(b, g1, 64);
  Duplicate(m.ReinterpretCast<uint16_t>(), uint16_t(0), 16);
  PipeBarrier<PIPE_ALL>();
  switch (((__gm__ uint32_t*)op)[0]) {
    case 0: m = a < b; break;
    case 1: m = a > b; break;
    case 2: m = a <= b; break;
    case 3: m = a >= b; break;
    case 4: m = a == b; break;
    default: m = a != b; break;
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, m, 32);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  OPKIT_EMU_PY_KERNEL(m, cmp_operator, 4);
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, cmpmask, 5);
}
