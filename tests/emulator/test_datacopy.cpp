// Data movement (facts sheet §2): DataCopy count and DataCopyParams forms (32-byte units), DataCopyPad
// GM<->UB with DataCopyExtParams (GM strides in bytes, UB strides in 32-byte blocks) and padding,
// UB->UB copies, SetAtomicAdd across blocks, scalar GM/UB access, tensor views.
#include "opkit_emu/pybind.h"

using namespace AscendC;

struct PadTiling {
  uint32_t blockCount, blockLen, srcStride, dstStride;  // the GM->UB DataCopyExtParams
  uint32_t outSrcStride, outDstStride;                  // the UB->GM DataCopyExtParams (same blockLen/count)
  uint32_t isPad, left, right;
  float padValue;
};

// GM->UB with the tiling's params, then the whole UB image (ubBytes) is copied out raw to `ub_image`,
// and UB->GM with its own strides to `out`.
extern "C" __global__ __aicore__ void pad_roundtrip(GM_ADDR src, GM_ADDR ub_image, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(PadTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 8192);
  LocalTensor<float> u = b.Get<float>();
  Duplicate(u, -1.0f, 2048);  // a known background to see which bytes the copy wrote
  PipeBarrier<PIPE_ALL>();
  GlobalTensor<float> gs, gimg, go;
  gs.SetGlobalBuffer((__gm__ float*)src);
  gimg.SetGlobalBuffer((__gm__ float*)ub_image, 2048);
  go.SetGlobalBuffer((__gm__ float*)out);
  DataCopyPad(u, gs, DataCopyExtParams{(uint16_t)t.blockCount, t.blockLen, t.srcStride, t.dstStride, 0},
              DataCopyPadExtParams<float>{t.isPad != 0, (uint8_t)t.left, (uint8_t)t.right, t.padValue});
  PipeBarrier<PIPE_ALL>();
  DataCopy(gimg, u, 2048);
  DataCopyPad(go, u, DataCopyExtParams{(uint16_t)t.blockCount, t.blockLen, t.outSrcStride, t.outDstStride, 0});
}

struct StrideTiling {
  uint16_t blockCount, blockLen, srcGap, dstGap;
};

// DataCopyParams GM->UB, UB->UB (count form into a second buffer), then UB->GM with the same params.
extern "C" __global__ __aicore__ void strided(GM_ADDR src, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(StrideTiling, t, tiling);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> qi;
  TQue<TPosition::VECOUT, 1> qo;
  pipe.InitBuffer(qi, 1, 16384);
  pipe.InitBuffer(qo, 1, 16384);
  GlobalTensor<half> gs, go;
  gs.SetGlobalBuffer((__gm__ half*)src);
  go.SetGlobalBuffer((__gm__ half*)out);
  LocalTensor<half> a = qi.AllocTensor<half>();
  Duplicate(a, half(0.0f), 8192);
  PipeBarrier<PIPE_ALL>();
  DataCopy(a, gs, DataCopyParams{t.blockCount, t.blockLen, t.srcGap, t.dstGap});
  qi.EnQue(a);
  a = qi.DeQue<half>();
  LocalTensor<half> c = qo.AllocTensor<half>();
  DataCopy(c, a, 8192);  // UB -> UB, count form
  qi.FreeTensor(a);
  qo.EnQue(c);
  c = qo.DeQue<half>();
  DataCopy(go, c, DataCopyParams{t.blockCount, t.blockLen, t.dstGap, t.srcGap});
  qo.FreeTensor(c);
}

// Each block adds its row of 40 floats (DataCopyPad, unaligned length) into the same GM row.
extern "C" __global__ __aicore__ void atomic_rows(GM_ADDR src, GM_ADDR acc, GM_ADDR tiling) {
  (void)tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  LocalTensor<float> u = b.Get<float>();
  GlobalTensor<float> gs, ga;
  gs.SetGlobalBuffer((__gm__ float*)src + GetBlockIdx() * 40, 40);
  ga.SetGlobalBuffer((__gm__ float*)acc, 40);
  DataCopyPad(u, gs, DataCopyExtParams{1, 40 * sizeof(float), 0, 0, 0}, DataCopyPadExtParams<float>{});
  SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);  // the copy-out reads what the copy-in wrote
  WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  SetAtomicAdd<float>();
  DataCopyPad(ga, u, DataCopyExtParams{1, 40 * sizeof(float), 0, 0, 0});
  SetAtomicNone();
}

// DisableDmaAtomic (CANN's current name of SetAtomicNone) turns the atomic add off again: acc is overwritten.
extern "C" __global__ __aicore__ void atomic_disabled(GM_ADDR src, GM_ADDR acc) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  LocalTensor<float> u = b.Get<float>();
  GlobalTensor<float> gs, ga;
  gs.SetGlobalBuffer((__gm__ float*)src, 64);
  ga.SetGlobalBuffer((__gm__ float*)acc, 64);
  DataCopy(u, gs, 64);
  SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  SetAtomicAdd<float>();
  DisableDmaAtomic();
  DataCopy(ga, u, 64);
}

// Scalar access and views: y[i] = x[n-1-i] through GlobalTensor/LocalTensor Get/SetValue,
// operator[] views and ReinterpretCast (float bits copied as int32).
extern "C" __global__ __aicore__ void scalar_views(GM_ADDR x, GM_ADDR y, GM_ADDR bits, GM_ADDR tiling) {
  (void)tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 1024);
  GlobalTensor<float> gx, gy;
  GlobalTensor<int32_t> gb;
  gx.SetGlobalBuffer((__gm__ float*)x, 24);
  gy.SetGlobalBuffer((__gm__ float*)y, 24);
  gb.SetGlobalBuffer((__gm__ int32_t*)bits, 8);
  LocalTensor<float> u = b.Get<float>();
  for (uint32_t i = 0; i < 24; ++i) u.SetValue(23 - i, gx.GetValue(i));
  LocalTensor<float> tail = u[16];  // elements 16..
  for (uint32_t i = 0; i < 24; ++i) gy.SetValue(i, u.GetValue(i));
  LocalTensor<int32_t> asInt = tail.ReinterpretCast<int32_t>();
  if (asInt.GetSize() != tail.GetSize() || tail.GetSize() != 256 - 16) return;
  SetFlag<HardEvent::S_MTE3>(EVENT_ID0);  // scalar stores before the copy-out reads them
  WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
  DataCopy(gb, asInt, 8);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  OPKIT_EMU_PY_KERNEL(m, atomic_disabled, 2);
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, pad_roundtrip, 4);
  OPKIT_EMU_PY_KERNEL(m, strided, 3);
  OPKIT_EMU_PY_KERNEL(m, atomic_rows, 3);
  OPKIT_EMU_PY_KERNEL(m, scalar_views, 4);
}
