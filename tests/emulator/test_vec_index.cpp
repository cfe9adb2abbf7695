// CreateVecIndex (opkit_emu/vec_index.h): count form and both level-0 forms. Doc: asc-devkit
// docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据填充/CreateVecIndex.md; the values as CANN's A2 code builds them
// (impl/basic_api/dav_c220/kernel_operator_vec_createvecindex_impl.h), mirror-cann/asc-devkit 82b89a15.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// out: 300 float (first 2.5), then 300 int32 (first -7) as int bits, then 300 half (first 2040) cast to float
extern "C" __global__ __aicore__ void vec_index(GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> bf, bi, bh, bc;
  pipe.InitBuffer(bf, 320 * 4);
  pipe.InitBuffer(bi, 320 * 4);
  pipe.InitBuffer(bh, 320 * 2);
  pipe.InitBuffer(bc, 320 * 4);
  GlobalTensor<float> go;
  go.SetGlobalBuffer((__gm__ float*)out, 3 * 320);
  LocalTensor<float> f = bf.Get<float>(), c = bc.Get<float>();
  LocalTensor<int32_t> i = bi.Get<int32_t>();
  LocalTensor<half> h = bh.Get<half>();
  Duplicate(f, 0.0f, 320);
  Duplicate(i, 0, 320);
  Duplicate(c, 0.0f, 320);
  CreateVecIndex(f, 2.5f, 300);
  CreateVecIndex(i, -7, 300);
  CreateVecIndex(h, half(2040.0f), 320);
  Cast(c, h, RoundMode::CAST_NONE, 320);
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, f, 320);
  DataCopy(go[320], i.ReinterpretCast<float>(), 320);
  DataCopy(go[640], c, 320);
}

// y (1024 elements) starts as its own contents; args = {mode, count or mask, repeatTime, blkStride, repStride}.
// mode 0: count form; 1: continuous mask; 2: bit mask {0x00FF00FF00FF00F0, 0x8000000000000001}.
template <class T>
__aicore__ void run(GM_ADDR first, GM_ADDR args, GM_ADDR y) {
  constexpr uint32_t n = 1024;
  GlobalTensor<T> gf, gy;
  GlobalTensor<int32_t> ga;
  gf.SetGlobalBuffer((__gm__ T*)first, 1);
  gy.SetGlobalBuffer((__gm__ T*)y, n);
  ga.SetGlobalBuffer((__gm__ int32_t*)args, 5);
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, n * sizeof(T));
  LocalTensor<T> d = b.Get<T>();
  DataCopy(d, gy, n);
  PipeBarrier<PIPE_ALL>();
  const T f = gf.GetValue(0);
  const int32_t mode = ga.GetValue(0), cnt = ga.GetValue(1);
  const uint8_t rep = static_cast<uint8_t>(ga.GetValue(2));
  const uint16_t bs = static_cast<uint16_t>(ga.GetValue(3));
  const uint8_t rs = static_cast<uint8_t>(ga.GetValue(4));
  uint64_t bits[2] = {0x00FF00FF00FF00F0ull, 0x8000000000000001ull};
  if (mode == 0) CreateVecIndex(d, f, static_cast<uint32_t>(cnt));
  else if (mode == 1) CreateVecIndex(d, f, static_cast<uint64_t>(cnt), rep, bs, rs);
  else CreateVecIndex(d, f, bits, rep, bs, rs);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, d, n);
}
extern "C" __global__ __aicore__ void i16(GM_ADDR f, GM_ADDR a, GM_ADDR y) { run<int16_t>(f, a, y); }
extern "C" __global__ __aicore__ void f16(GM_ADDR f, GM_ADDR a, GM_ADDR y) { run<half>(f, a, y); }
extern "C" __global__ __aicore__ void i32(GM_ADDR f, GM_ADDR a, GM_ADDR y) { run<int32_t>(f, a, y); }
extern "C" __global__ __aicore__ void f32(GM_ADDR f, GM_ADDR a, GM_ADDR y) { run<float>(f, a, y); }

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, vec_index, 1);
  OPKIT_EMU_PY_KERNEL(m, i16, 3);
  OPKIT_EMU_PY_KERNEL(m, f16, 3);
  OPKIT_EMU_PY_KERNEL(m, i32, 3);
  OPKIT_EMU_PY_KERNEL(m, f32, 3);
}
