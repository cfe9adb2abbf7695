// ReduceMax / ReduceMin / ReduceSum with a pattern (lib/reduce/reduce.h): [first, last] rows padded to 32 bytes, AR (per row)
// and RA (per column), half and float, with and without sharedTmpBuffer, isReuseSource; test_reduce.py checks them
// against PyTorch's amax / amin.
#include "opkit_emu/pybind.h"
#include "adv_api/reduce/reduce.h"  // CANN's include path resolves

using namespace AscendC;

struct RdCase {
  uint32_t op, ra, half, tmp, reuse, innerPad;  // op 0 max, 1 min, 2 sum, 3 mean, 4 prod, 5 any, 6 all (2-6 float
                                                // only); ra: the RA pattern; tmp: 0 = framework form
  uint32_t first, last, pad;                    // pad: last rounded up to 32 bytes of the type
};

template <class T, class P, bool reuse>
__aicore__ inline void call(const RdCase& t, const LocalTensor<T>& d, const LocalTensor<T>& s,
                            const LocalTensor<uint8_t>& tmp) {
  const uint32_t shape[] = {t.first, t.last};
  if (t.op == 0 && t.tmp) {
    ReduceMax<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);  // RD:call
  } else if (t.op == 0) {
    ReduceMax<T, P, reuse>(d, s, shape, t.innerPad != 0);
  } else if (t.op == 1 && t.tmp) {
    ReduceMin<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);
  } else if (t.op == 1) {
    ReduceMin<T, P, reuse>(d, s, shape, t.innerPad != 0);
  } else if constexpr (std::is_same<T, float>::value) {  // sum, mean, prod, any, all: float only on A2
    if (t.op == 2 && t.tmp) ReduceSum<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);
    else if (t.op == 2) ReduceSum<T, P, reuse>(d, s, shape, t.innerPad != 0);
    else if (t.op == 3 && t.tmp) ReduceMean<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);
    else if (t.op == 3) ReduceMean<T, P, reuse>(d, s, shape, t.innerPad != 0);
    else if (t.op == 4 && t.tmp) ReduceProd<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);
    else if (t.op == 4) ReduceProd<T, P, reuse>(d, s, shape, t.innerPad != 0);
    else if (t.op == 5 && t.tmp) ReduceAny<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);
    else if (t.op == 5) ReduceAny<T, P, reuse>(d, s, shape, t.innerPad != 0);
    else if (t.op == 6 && t.tmp) ReduceAll<T, P, reuse>(d, s, tmp, shape, t.innerPad != 0);
    else ReduceAll<T, P, reuse>(d, s, shape, t.innerPad != 0);
  }
}

template <class T>
__aicore__ inline void run(const RdCase& t, const LocalTensor<T>& d, const LocalTensor<T>& s,
                           const LocalTensor<uint8_t>& tmp) {
  if (t.ra && t.reuse) call<T, Pattern::Reduce::RA, true>(t, d, s, tmp);
  else if (t.ra) call<T, Pattern::Reduce::RA, false>(t, d, s, tmp);
  else if (t.reuse) call<T, Pattern::Reduce::AR, true>(t, d, s, tmp);
  else call<T, Pattern::Reduce::AR, false>(t, d, s, tmp);
}

// in: first x pad floats; out: max(first, pad) results (as float), rounded up to 8
extern "C" __global__ __aicore__ void rd_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RdCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.first * t.pad, nd = t.ra ? t.last : t.first, no = (nd + 15) / 16 * 16;
  TBuf<TPosition::VECCALC> bx, bh, bd, bt;
  pipe.InitBuffer(bx, n * 4);
  pipe.InitBuffer(bh, n * 2 + 32);
  pipe.InitBuffer(bd, no * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, n);
  go.SetGlobalBuffer((__gm__ float*)out, no);
  LocalTensor<float> x = bx.Get<float>(), d = bd.Get<float>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, n);
  Duplicate(d, 0.0f, no);
  PipeBarrier<PIPE_ALL>();
  if (t.half) {
    LocalTensor<half> h = bh.Get<half>(), hd = bx.Get<half>();  // the result in x's buffer, after the cast
    Cast(h, x, RoundMode::CAST_NONE, n);
    PipeBarrier<PIPE_ALL>();
    Duplicate(hd, static_cast<half>(0.0f), no);
    PipeBarrier<PIPE_ALL>();
    run<half>(t, hd, h, tmp);
    PipeBarrier<PIPE_ALL>();
    Cast(d, hd, RoundMode::CAST_NONE, no);
  } else {
    run<float>(t, d, x, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, no);
}

// ReduceAny (op 5) / ReduceAll (op 6) on uint8_t: in first x pad bytes (pad: last rounded up to 32), out nd bytes
template <class P, bool reuse>
__aicore__ inline void call_u8(const RdCase& t, const LocalTensor<uint8_t>& d, const LocalTensor<uint8_t>& s,
                               const LocalTensor<uint8_t>& tmp) {
  const uint32_t shape[] = {t.first, t.last};
  if (t.op == 5 && t.tmp) ReduceAny<uint8_t, P, reuse>(d, s, tmp, shape, true);
  else if (t.op == 5) ReduceAny<uint8_t, P, reuse>(d, s, shape, true);
  else if (t.tmp) ReduceAll<uint8_t, P, reuse>(d, s, tmp, shape, true);
  else ReduceAll<uint8_t, P, reuse>(d, s, shape, true);
}
extern "C" __global__ __aicore__ void rd_u8(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RdCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.first * t.pad, nd = t.ra ? t.last : t.first, no = (nd + 31) / 32 * 32;
  TBuf<TPosition::VECCALC> bx, bd, bt;
  pipe.InitBuffer(bx, n);
  pipe.InitBuffer(bd, no);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<uint8_t> gi, go;
  gi.SetGlobalBuffer((__gm__ uint8_t*)in, n);
  go.SetGlobalBuffer((__gm__ uint8_t*)out, no);
  LocalTensor<uint8_t> x = bx.Get<uint8_t>(), d = bd.Get<uint8_t>(), tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, n);
  PipeBarrier<PIPE_ALL>();
  if (t.ra && t.reuse) call_u8<Pattern::Reduce::RA, true>(t, d, x, tmp);
  else if (t.ra) call_u8<Pattern::Reduce::RA, false>(t, d, x, tmp);
  else call_u8<Pattern::Reduce::AR, false>(t, d, x, tmp);
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(go, d, {1, nd + t.half, 0, 0, 0});  // half (unused for uint8_t): extra dst bytes to copy out
}

// ReduceAny on a source left poisoned (but holding its values) by a ReduceMax with isReuseSource: AR, float, one
// row per 8 floats; out: first floats
extern "C" __global__ __aicore__ void rd_any_poisoned(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RdCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.first * 8, no = (t.first + 7) / 8 * 8;
  TBuf<TPosition::VECCALC> bx, bd;
  pipe.InitBuffer(bx, n * 4);
  pipe.InitBuffer(bd, no * 4);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, n);
  go.SetGlobalBuffer((__gm__ float*)out, no);
  LocalTensor<float> x = bx.Get<float>(), d = bd.Get<float>();
  DataCopy(x, gi, n);
  PipeBarrier<PIPE_ALL>();
  const uint32_t shape[] = {t.first, 8};
  ReduceMax<float, Pattern::Reduce::AR, true>(d, x, shape, true);  // leaves x poisoned
  PipeBarrier<PIPE_ALL>();
  ReduceAny<float, Pattern::Reduce::AR>(d, x, shape, true);  // RD:any-poisoned
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, no);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, rd_call, 3);
  OPKIT_EMU_PY_KERNEL(m, rd_u8, 3);
  OPKIT_EMU_PY_KERNEL(m, rd_any_poisoned, 3);
}
