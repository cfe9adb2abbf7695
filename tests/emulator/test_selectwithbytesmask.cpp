// Select with a byte mask (lib/select/selectwithbytesmask.h): tensor/scalar and scalar/tensor forms, a mask wider
// than src, the sharedTmpBuffer minimum. test_selectwithbytesmask.py compares with torch.where.
#include "opkit_emu/pybind.h"
#include "adv_api/select/selectwithbytesmask.h"  // CANN's include path resolves

using namespace AscendC;

struct SelTiling {
  uint32_t rows, srcCols, maskCols, reverse, tmpBytes, reuse;
};

// x: rows x srcCols floats; mask: rows x maskCols uint8; y: rows x srcCols; the scalar is 5.5.
extern "C" __global__ __aicore__ void select_bytes(GM_ADDR x, GM_ADDR mask, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SelTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bm, bd, bt;
  const uint32_t n = t.rows * t.srcCols, nm = t.rows * t.maskCols;
  pipe.InitBuffer(bx, n * 4);
  pipe.InitBuffer(bm, nm);
  pipe.InitBuffer(bd, n * 4);
  pipe.InitBuffer(bt, t.tmpBytes);
  LocalTensor<float> lx = bx.Get<float>(), ld = bd.Get<float>();
  LocalTensor<uint8_t> lm = bm.Get<uint8_t>(), lt = bt.Get<uint8_t>();
  GlobalTensor<float> gx, gy;
  GlobalTensor<uint8_t> gm;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  gm.SetGlobalBuffer((__gm__ uint8_t*)mask, nm);
  gy.SetGlobalBuffer((__gm__ float*)y, n);
  DataCopy(lx, gx, n);
  DataCopy(lm, gm, nm);
  PipeBarrier<PIPE_ALL>();
  SelectWithBytesMaskShapeInfo info;
  info.firstAxis = t.rows;
  info.srcLastAxis = t.srcCols;
  info.maskLastAxis = t.maskCols;
  if (t.reverse) Select(ld, 5.5f, lx, lm, lt, info);
  else if (t.reuse) Select(ld, lx, 5.5f, lm, lt, info);
  else Select<float, uint8_t, false>(ld, lx, 5.5f, lm, lt, info);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, ld, n);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, select_bytes, 4);
}
