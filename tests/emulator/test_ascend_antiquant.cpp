// AscendAntiQuant (lib/quantization/ascend_antiquant.h): int8_t to half / bfloat16_t, the tensor offset + scale,
// tensor scale, scalar offset + scale and scalar scale forms, with and without sharedTmpBuffer (test_ascend_antiquant.py).
#include "opkit_emu/pybind.h"
#include "adv_api/quantization/kernel_operator_ascend_antiquant_intf.h"  // CANN's include path resolves

using namespace AscendC;

struct AqCase {
  uint32_t isBf16, kind, tmp, K, total, groups, N, viaStruct;  // kind: 0 off+scale, 1 scale, 2 scalars, 3 scalar scale
  uint16_t offBits, scBits;                                     // the scalar forms' offset / scale, D's bits
};

template <class D>
__aicore__ inline D bits(uint16_t b) { return D::FromBits(b); }

template <class D>
__aicore__ inline void run(const AqCase& t, GM_ADDR in, GM_ADDR out, TPipe& pipe) {
  const uint32_t total = t.total, ta = (total + 31) / 32 * 32, ns = t.groups * t.N, nsa = (ns + 15) / 16 * 16,
                 na = (t.N + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bs, bsc, bo, bd, bt;
  pipe.InitBuffer(bs, ta);
  pipe.InitBuffer(bsc, nsa * 2);
  pipe.InitBuffer(bo, na * 2);
  pipe.InitBuffer(bd, ta * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<int8_t> gs;
  GlobalTensor<D> gsc, go, gd;
  gs.SetGlobalBuffer((__gm__ int8_t*)in, ta);
  gsc.SetGlobalBuffer((__gm__ D*)(in + ta), nsa);
  go.SetGlobalBuffer((__gm__ D*)(in + ta + nsa * 2), na);
  gd.SetGlobalBuffer((__gm__ D*)out, ta);
  LocalTensor<int8_t> src = bs.Get<int8_t>(total);  // sized to the data: N = src.GetSize() / k
  LocalTensor<D> sc = bsc.Get<D>(), of = bo.Get<D>(), dst = bd.Get<D>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(bs.Get<int8_t>(), gs, ta);
  DataCopy(sc, gsc, nsa);
  DataCopy(of, go, na);
  PipeBarrier<PIPE_ALL>();
  AntiQuantShapeInfo si;
  if (t.kind == 1) {
    if (t.viaStruct) si.scaleHeight = t.groups, si.scaleWidth = t.N;
    else {
      uint32_t shape[] = {t.groups, t.N};
      sc.SetShapeInfo(ShapeInfo(2, shape, DataFormat::ND));
    }
  }
  const D o = bits<D>(t.offBits), s = bits<D>(t.scBits);
  if (t.kind == 0 && t.tmp) AscendAntiQuant<int8_t, D, false>(dst, src, of, sc, tmp, t.K);  // AQ:call
  else if (t.kind == 0) AscendAntiQuant<int8_t, D, false>(dst, src, of, sc, t.K);
  else if (t.kind == 1) AscendAntiQuant<int8_t, D, false>(dst, src, sc, tmp, t.K, si);
  else if (t.kind == 2 && t.tmp) AscendAntiQuant<int8_t, D, false>(dst, src, o, s, tmp, t.K);
  else if (t.kind == 2) AscendAntiQuant<int8_t, D, true>(dst, src, o, s, t.K);
  else AscendAntiQuant<int8_t, D, false>(dst, src, s, tmp, t.K);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gd, dst, ta);
}

// in: src int8 (padded to 32), scale [groups, N] and offset [N] as D's bits (each padded to 16); out: dst D's bits
extern "C" __global__ __aicore__ void aq_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(AqCase, t, tiling);
  TPipe pipe;
  if (t.isBf16) run<bfloat16_t>(t, in, out, pipe);
  else run<half>(t, in, out, pipe);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, aq_call, 3);
}
