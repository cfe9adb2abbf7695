// TopK (lib/sort/topk.h): half and float, normal and small mode, with and without isInitIndex / isHasfinish /
// tmpLocal, largest and smallest, on the tiling the host stand-in's TopKTilingFunc fills (test_topk.py), compared
// with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/sort/kernel_operator_topk_intf.h"  // CANN's include path resolves
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

struct TkCase {
  uint32_t isHalf, tmp, init, finish, small, largest;  // tmp: tmpLocal bytes, 0 = the form without it
  int32_t outter, inner, n, k;
  uint32_t kv, ki;  // the value / index row pitch of the outputs
  TopkTiling tiling;
};

template <class T, bool init, bool fin, TopKMode mode>
__aicore__ inline void call(const TkCase& t, const LocalTensor<T>& dv, const LocalTensor<int32_t>& di,
                            const LocalTensor<T>& x, const LocalTensor<int32_t>& idx, const LocalTensor<bool>& f,
                            const LocalTensor<uint8_t>& tmp) {
  TopKInfo info;
  info.outter = t.outter, info.inner = t.inner, info.n = t.n;
  if (t.tmp) TopK<T, init, fin, false, mode>(dv, di, x, idx, f, tmp, t.k, t.tiling, info, t.largest != 0);  // TK:call
  else TopK<T, init, fin, false, mode>(dv, di, x, idx, f, t.k, t.tiling, info, t.largest != 0);
}
template <class T, TopKMode mode>
__aicore__ inline void pick(const TkCase& t, const LocalTensor<T>& dv, const LocalTensor<int32_t>& di,
                            const LocalTensor<T>& x, const LocalTensor<int32_t>& idx, const LocalTensor<bool>& f,
                            const LocalTensor<uint8_t>& tmp) {
  if (t.init && t.finish) call<T, true, true, mode>(t, dv, di, x, idx, f, tmp);
  else if (t.init) call<T, true, false, mode>(t, dv, di, x, idx, f, tmp);
  else if (t.finish) call<T, false, true, mode>(t, dv, di, x, idx, f, tmp);
  else call<T, false, false, mode>(t, dv, di, x, idx, f, tmp);
}

// in: outter*inner float values, outter*inner int32 indexes, 32 bool finish flags;
// out: outter*kv float values (pad lanes preset to 7), outter*ki int32 indexes (pad preset to -5)
extern "C" __global__ __aicore__ void tk_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(TkCase, t, tiling);
  TPipe pipe;
  const uint32_t all = t.outter * t.inner, nv = t.outter * t.kv, ni = t.outter * t.ki;
  const uint32_t nva = (nv + 15) / 16 * 16, nia = (ni + 7) / 8 * 8;
  TBuf<TPosition::VECCALC> bx, bi, bf, bdv, bdi, hx, hdv, bt;
  pipe.InitBuffer(bx, all * 4);
  pipe.InitBuffer(bi, all * 4);
  pipe.InitBuffer(bf, 32);
  pipe.InitBuffer(bdv, nva * 4);
  pipe.InitBuffer(bdi, nia * 4);
  pipe.InitBuffer(hx, all * 2);
  pipe.InitBuffer(hdv, nva * 2);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gx, gov;
  GlobalTensor<int32_t> gi, goi;
  GlobalTensor<bool> gf;
  gx.SetGlobalBuffer((__gm__ float*)in, all);
  gi.SetGlobalBuffer((__gm__ int32_t*)(in + all * 4), all);
  gf.SetGlobalBuffer((__gm__ bool*)(in + all * 8), 32);
  gov.SetGlobalBuffer((__gm__ float*)out, nva);
  goi.SetGlobalBuffer((__gm__ int32_t*)(out + nva * 4), nia);
  LocalTensor<float> x = bx.Get<float>(), dv = bdv.Get<float>();
  LocalTensor<int32_t> idx = bi.Get<int32_t>(), di = bdi.Get<int32_t>();
  LocalTensor<bool> f = bf.Get<bool>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gx, all);
  DataCopy(idx, gi, all);
  DataCopy(f, gf, 32);
  Duplicate(dv, 7.0f, nva);
  Duplicate(di, -5, nia);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> xh = hx.Get<half>(), dvh = hdv.Get<half>();
    Cast(xh, x, RoundMode::CAST_NONE, all);
    Cast(dvh, dv, RoundMode::CAST_NONE, nva);
    PipeBarrier<PIPE_ALL>();
    if (t.small) pick<half, TopKMode::TOPK_NSMALL>(t, dvh, di, xh, idx, f, tmp);
    else pick<half, TopKMode::TOPK_NORMAL>(t, dvh, di, xh, idx, f, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(dv, dvh, RoundMode::CAST_NONE, nva);
  } else {
    if (t.small) pick<float, TopKMode::TOPK_NSMALL>(t, dv, di, x, idx, f, tmp);
    else pick<float, TopKMode::TOPK_NORMAL>(t, dv, di, x, idx, f, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(gov, dv, nva);
  DataCopy(goi, di, nia);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, tk_call, 3);
}
