// Broadcast / BroadCast (lib/pad/broadcast.h): dim 1 and 2, axis 0 and 1, the sharedTmpBuffer and framework
// forms, int8_t / half / float, the GetBroadCastMaxMinTmpSize minimum. test_broadcast.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "adv_api/pad/broadcast.h"  // CANN's include path resolves (kernel_operator.h already has the family)

using namespace AscendC;

struct BrcTiling {
  uint32_t dim, axis, type;    // type 0 float, 1 half, 2 int8_t
  uint32_t dst0, dst1, src0, src1;
  uint32_t tmp;                // sharedTmpBuffer bytes; 0: the framework form
  uint32_t older;              // 1: the implementation's name BroadCast
  uint32_t poison;             // 1: only the source's first 32 bytes are written
};

template <class T, int32_t dim, int32_t axis>
void brc(const LocalTensor<T>& d, const LocalTensor<T>& s, const BrcTiling& t, const LocalTensor<uint8_t>& tmp) {
  const uint32_t ds[2] = {t.dst0, t.dst1}, ss[2] = {t.src0, t.src1};
  if (t.tmp && t.older) BroadCast<T, dim, axis>(d, s, ds, ss, const_cast<LocalTensor<uint8_t>&>(tmp));
  else if (t.tmp) Broadcast<T, dim, axis>(d, s, ds, ss, const_cast<LocalTensor<uint8_t>&>(tmp));  // BRC:call
  else Broadcast<T, dim, axis>(d, s, ds, ss);
}
template <class T>
void brc_any(const LocalTensor<T>& d, const LocalTensor<T>& s, const BrcTiling& t, const LocalTensor<uint8_t>& tmp) {
  if (t.dim == 1) brc<T, 1, 0>(d, s, t, tmp);
  else if (t.axis == 0) brc<T, 2, 0>(d, s, t, tmp);
  else brc<T, 2, 1>(d, s, t, tmp);
}

// x: source as raw bytes (already of the type); out: the destination's raw bytes
extern "C" __global__ __aicore__ void brc_call(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(BrcTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bs, bd, bt;
  const uint32_t sz = t.type == 0 ? 4 : (t.type == 1 ? 2 : 1);
  const uint32_t n = t.dst0 * (t.dim == 2 ? t.dst1 : 1), m = t.src0 * (t.dim == 2 ? t.src1 : 1);
  const uint32_t sb = (m * sz + 31) / 32 * 32, db = (n * sz + 31) / 32 * 32;
  pipe.InitBuffer(bs, sb);
  pipe.InitBuffer(bd, db);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<uint8_t> gx, go;
  gx.SetGlobalBuffer((__gm__ uint8_t*)x, sb);
  go.SetGlobalBuffer((__gm__ uint8_t*)out, db);
  LocalTensor<uint8_t> s = bs.Get<uint8_t>(), d = bd.Get<uint8_t>(), tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(s, gx, t.poison ? 32 : sb);
  Duplicate(d.ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(db / 2));
  PipeBarrier<PIPE_ALL>();
  if (t.type == 0) brc_any<float>(d.ReinterpretCast<float>(), s.ReinterpretCast<float>(), t, tmp);
  else if (t.type == 1) brc_any<half>(d.ReinterpretCast<half>(), s.ReinterpretCast<half>(), t, tmp);
  else brc_any<int8_t>(d.ReinterpretCast<int8_t>(), s.ReinterpretCast<int8_t>(), t, tmp);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, d, db);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, brc_call, 3);
}
