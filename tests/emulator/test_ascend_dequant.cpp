// AscendDequant (lib/quantization/ascend_dequant.h): the DequantParams, calCount and whole-tensor forms with a
// deqScale tensor, the scalar forms, with and without sharedTmpBuffer, every A2 (dstT, scaleT) pair.
// test_ascend_dequant.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/quantization/ascend_dequant.h"  // CANN's include path resolves

using namespace AscendC;

struct DeqTiling {
  uint32_t m, n, calCount, pair;  // pair 0 float/float, 1 half/uint64, 2 bf16/bf16, 3 float/bf16, 4 bf16/float
  uint32_t form;                  // 0 DequantParams, 1 calCount (= calCount), 2 whole tensor, 3 scalar
  uint32_t tmp;                   // sharedTmpBuffer bytes, 0 = the framework form
  uint32_t multiRow;              // 1: DEQUANT_WITH_MULTI_ROW
  uint32_t scaleElems;            // elements of the deqScale tensor
  float scalar;
};

template <class D, class S, DeQuantMode mode>
void call(const LocalTensor<D>& d, const LocalTensor<int32_t>& x, const LocalTensor<S>& s,
          const LocalTensor<uint8_t>& tmp, const DeqTiling& t) {
  const DequantParams p{t.m, t.n, t.calCount};
  if (t.form == 0 && t.tmp) AscendDequant<D, S, mode>(d, x, s, tmp, p);  // DQ:call
  else if (t.form == 0) AscendDequant<D, S, mode>(d, x, s, p);
  else if (t.form == 1 && t.tmp) AscendDequant<D, S, mode>(d, x, s, tmp, t.calCount);
  else if (t.form == 1) AscendDequant<D, S, mode>(d, x, s, t.calCount);
  else if (t.tmp) AscendDequant<D, S, mode>(d, x, s, tmp);
  else AscendDequant<D, S, mode>(d, x, s);
}
template <class D, class S, DeQuantMode mode>
void scalar_call(const LocalTensor<D>& d, const LocalTensor<int32_t>& x, const LocalTensor<uint8_t>& tmp,
                 const DeqTiling& t) {
  const DequantParams p{t.m, t.n, t.calCount};
  if (t.tmp) AscendDequant<D, S, mode>(d, x, static_cast<S>(t.scalar), tmp, p);
  else AscendDequant<D, S, mode>(d, x, static_cast<S>(t.scalar), p);
}
template <class D, class S>
void run(const LocalTensor<uint8_t>& d, const LocalTensor<int32_t>& x, const LocalTensor<uint8_t>& s,
         const LocalTensor<uint8_t>& tmp, const DeqTiling& t) {
  LocalTensor<D> dd = d.ReinterpretCast<D>();
  LocalTensor<S> ss = s.ReinterpretCast<S>()[0];
  ss.SetSize(t.scaleElems);
  if constexpr (!std::is_same<S, uint64_t>::value) {
    if (t.form == 3) {
      if (t.multiRow) scalar_call<D, S, DeQuantMode::DEQUANT_WITH_MULTI_ROW>(dd, x, tmp, t);
      else scalar_call<D, S, DeQuantMode::DEQUANT_WITH_SINGLE_ROW>(dd, x, tmp, t);
      return;
    }
  }
  if (t.multiRow) call<D, S, DeQuantMode::DEQUANT_WITH_MULTI_ROW>(dd, x, ss, tmp, t);
  else call<D, S, DeQuantMode::DEQUANT_WITH_SINGLE_ROW>(dd, x, ss, tmp, t);
}

// x: m x n int32; s: the deqScale tensor's raw bytes (256); out: the dst's raw bytes (m x n x 4 + 256)
extern "C" __global__ __aicore__ void deq_call(GM_ADDR x, GM_ADDR s, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(DeqTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bs, bd, bt;
  const uint32_t total = t.m * t.n, db = total * 4 + 256;
  pipe.InitBuffer(bx, total * 4);
  pipe.InitBuffer(bs, 1024);
  pipe.InitBuffer(bd, db);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<int32_t> gx;
  GlobalTensor<uint8_t> gs, go;
  gx.SetGlobalBuffer((__gm__ int32_t*)x, total);
  gs.SetGlobalBuffer((__gm__ uint8_t*)s, 1024);
  go.SetGlobalBuffer((__gm__ uint8_t*)out, db);
  LocalTensor<int32_t> lx = bx.Get<int32_t>();
  LocalTensor<uint8_t> ls = bs.Get<uint8_t>(), ld = bd.Get<uint8_t>(), tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(lx, gx, total);
  DataCopy(ls, gs, 1024);
  Duplicate(ld.ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(db / 2));
  PipeBarrier<PIPE_ALL>();
  if (t.pair == 0) run<float, float>(ld, lx, ls, tmp, t);
  else if (t.pair == 1) run<half, uint64_t>(ld, lx, ls, tmp, t);
  else if (t.pair == 2) run<bfloat16_t, bfloat16_t>(ld, lx, ls, tmp, t);
  else if (t.pair == 3) run<float, bfloat16_t>(ld, lx, ls, tmp, t);
  else run<bfloat16_t, float>(ld, lx, ls, tmp, t);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, ld, db);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, deq_call, 4);
}
