// Newer CANN kernel API names found by the API inventory (python -m opkit.emulator.inventory): LocalMemAllocator
// and Hardware, AscendCUtils, the compound vector instructions (Axpy, MulAddDst, FusedMulAdd,
// FusedMulAddRelu, AddRelu, SubRelu), ReduceRepeat / ReduceDataBlock / ReducePairElem, the scalar helpers and
// NumericLimits, printf / PRINTF / KERNEL_LOG / ASCENDC_ASSERT / assert(expr, fmt). Doc pages (asc-devkit
// docs/zh/api/SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15): 资源管理/LocalMemAllocator/*.md,
// Memory矢量计算/复合计算/{Axpy,MulAddDst,FusedMulAdd,MulAddRelu,AddRelu,SubRelu}.md,
// Memory矢量计算/归约计算/{ReduceRepeat,ReduceDataBlock,ReducePairElem}.md, 标量计算/*.md; test_cann_api.py
// holds the float64 references.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// Copies n floats in with LocalMemAllocator tiles (no TPipe), y = 2x, GetCurAddr() into out[n]. mode 1 asks
// for a tile past the end of UB.
extern "C" __global__ __aicore__ void allocator(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  constexpr uint32_t n = 256;
  GlobalTensor<float> gx, gy;
  GlobalTensor<int32_t> gm;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  gy.SetGlobalBuffer((__gm__ float*)y, n + 1);
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t md = gm.GetValue(0);
  LocalMemAllocator<Hardware::UB> ub;
  LocalTensor<float> a = ub.Alloc<TPosition::VECIN, float, n>();
  LocalTensor<float> b = ub.Alloc<float>(n);
  if (md == 1) (void)ub.Alloc<float>(48 * 1024);  // 192 KiB more: past the end
  DataCopy(a, gx, n);
  SetFlag<HardEvent::MTE2_V>(0);
  WaitFlag<HardEvent::MTE2_V>(0);
  Muls(b, a, 2.0f, n);
  SetFlag<HardEvent::V_MTE3>(0);
  WaitFlag<HardEvent::V_MTE3>(0);
  DataCopy(gy, b, n);
  gy.SetValue(n, static_cast<float>(ub.GetCurAddr()));
}

// out = op(a, b, d) over n elements of T (dst type D for the mixed half -> float forms): mode 0 Axpy
// (scalar 0.75), 1 MulAddDst, 2 FusedMulAdd, 3 FusedMulAddRelu, 4 AddRelu, 5 SubRelu, 6 MulAddRelu.
template <class D, class T>
__aicore__ void fused_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR d, GM_ADDR mode, GM_ADDR out) {
  constexpr uint32_t n = 128;
  GlobalTensor<T> ga, gb;
  GlobalTensor<D> gd, go;
  GlobalTensor<int32_t> gm;
  ga.SetGlobalBuffer((__gm__ T*)a, n);
  gb.SetGlobalBuffer((__gm__ T*)b, n);
  gd.SetGlobalBuffer((__gm__ D*)d, n);
  go.SetGlobalBuffer((__gm__ D*)out, n);
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qa, qb, qd;
  TQue<QuePosition::VECOUT, 1> qo;
  pipe.InitBuffer(qa, 1, n * sizeof(T));
  pipe.InitBuffer(qb, 1, n * sizeof(T));
  pipe.InitBuffer(qd, 1, n * sizeof(D));
  pipe.InitBuffer(qo, 1, n * sizeof(D));
  auto la = qa.AllocTensor<T>(), lb = qb.AllocTensor<T>();
  auto ld = qd.AllocTensor<D>();
  DataCopy(la, ga, n); DataCopy(lb, gb, n); DataCopy(ld, gd, n);
  qa.EnQue(la); qb.EnQue(lb); qd.EnQue(ld);
  la = qa.DeQue<T>(); lb = qb.DeQue<T>(); ld = qd.DeQue<D>();
  auto lo = qo.AllocTensor<D>();
  const int32_t md = gm.GetValue(0);
  if constexpr (std::is_same<D, T>::value) {
    switch (md) {
      case 2: FusedMulAdd(ld, la, lb, n); break;
      case 3: FusedMulAddRelu(ld, la, lb, n); break;
      case 6: MulAddRelu(ld, la, lb, n); break;
      case 4: AddRelu(ld, la, lb, n); break;
      case 5: SubRelu(ld, la, lb, n); break;
      default: break;
    }
  }
  if (md == 0) Axpy(ld, la, static_cast<T>(0.75f), n);
  if (md == 1) MulAddDst(ld, la, lb, n);
  DataCopy(lo, ld, n);
  qo.EnQue(lo);
  lo = qo.DeQue<D>();
  DataCopy(go, lo, n);
  qo.FreeTensor(lo); qa.FreeTensor(la); qb.FreeTensor(lb); qd.FreeTensor(ld);
}
extern "C" __global__ __aicore__ void fused_f32(GM_ADDR a, GM_ADDR b, GM_ADDR d, GM_ADDR m, GM_ADDR o) { fused_kernel<float, float>(a, b, d, m, o); }
extern "C" __global__ __aicore__ void fused_f16(GM_ADDR a, GM_ADDR b, GM_ADDR d, GM_ADDR m, GM_ADDR o) { fused_kernel<half, half>(a, b, d, m, o); }
extern "C" __global__ __aicore__ void fused_f16_f32(GM_ADDR a, GM_ADDR b, GM_ADDR d, GM_ADDR m, GM_ADDR o) { fused_kernel<float, half>(a, b, d, m, o); }

// The current reduction names against the older ones, 2 repeats of float: out[0:2] ReduceRepeat<SUM>,
// out[2:4] WholeReduceSum, out[4:6] values of ReduceRepeat<MAX> (value, index pairs), out[8:24]
// ReduceDataBlock<MIN>, out[24:88] ReducePairElem<SUM>.
extern "C" __global__ __aicore__ void reduce_names(GM_ADDR x, GM_ADDR out) {
  constexpr uint32_t n = 128;
  GlobalTensor<float> gx, go;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  go.SetGlobalBuffer((__gm__ float*)out, 88);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bo;
  pipe.InitBuffer(bx, n * sizeof(float));
  pipe.InitBuffer(bo, 96 * sizeof(float));
  auto lx = bx.Get<float>(), lo = bo.Get<float>();
  DataCopy(lx, gx, n);
  Duplicate(lo, 0.0f, 96);
  PipeBarrier<PIPE_ALL>();
  ReduceRepeat<ReduceType::SUM>(lo, lx, 64, 2, 1, 1, 8);
  WholeReduceSum(lo[2], lx, 64, 2, 1, 1, 8);
  ReduceRepeat<ReduceType::MAX>(lo[8], lx, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
  ReduceDataBlock<ReduceType::MIN>(lo[16], lx, 64, 2, 1, 1, 8);
  ReducePairElem<ReduceType::SUM>(lo[32], lx, 64, 2, 1, 1, 8);
  PipeBarrier<PIPE_ALL>();
  for (uint32_t i = 0; i < 4; ++i) go.SetValue(i, lo.GetValue(i));
  go.SetValue(4, lo.GetValue(8));
  go.SetValue(5, lo.GetValue(9));
  for (uint32_t i = 0; i < 16; ++i) go.SetValue(8 + i, lo.GetValue(16 + i));
  for (uint32_t i = 0; i < 64; ++i) go.SetValue(24 + i, lo.GetValue(32 + i));
}

// Scalar helpers: out[k] as int64.
extern "C" __global__ __aicore__ void scalars(GM_ADDR out) {
  GlobalTensor<int64_t> g;
  g.SetGlobalBuffer((__gm__ int64_t*)out, 16);
  g.SetValue(0, CountLeadingZero(0x0100000000000020ULL));
  g.SetValue(1, CountBitsCntSameAsSignBit(static_cast<int64_t>(0x0100000000000020ULL)));
  g.SetValue(2, GetSFFValue<1>(0x1000000000000100ULL));
  g.SetValue(3, GetBitCount<1>(0xF0F0ULL) + 100 * ScalarGetCountOfValue<0>(0xFFFFFFFFFFFFFFF0ULL));
  g.SetValue(4, ScalarCountLeadingZero(0) + 1000 * CountBitsCntSameAsSignBit(-1));
  g.SetValue(5, GetSFFValue<0>(~0ULL));
  g.SetValue(6, NumericLimits<half>::Max().bits_);
  g.SetValue(7, static_cast<int64_t>(NumericLimits<int16_t>::Lowest()));
  g.SetValue(8, Cast<float, half, RoundMode::CAST_ROUND>(2049.0f).bits_);
  g.SetValue(9, Cast<float, int32_t, RoundMode::CAST_FLOOR>(-1.5f));
  g.SetValue(10, Cast(1.00390625f).bits_);  // float -> bfloat16_t, a tie: to even
  uint32_t ver = 0;
  GetArchVersion(ver);
  g.SetValue(11, ver);
  g.SetValue(12, GetTaskRatio() + 10 * GetSubBlockNum());
}

// AscendCUtils::SetMask<half>(len) then a level-0 Duplicate that uses the mask register: the first `len`
// lanes of each of the 2 repeats become 1, the rest keep 0.
extern "C" __global__ __aicore__ void utils_mask(GM_ADDR len, GM_ADDR out) {
  GlobalTensor<int32_t> gl;
  GlobalTensor<half> go;
  gl.SetGlobalBuffer((__gm__ int32_t*)len, 1);
  go.SetGlobalBuffer((__gm__ half*)out, 256);
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256 * sizeof(half));
  auto t = b.Get<half>();
  Duplicate(t, static_cast<half>(0.0f), 256);
  AscendCUtils::SetMask<half>(gl.GetValue(0));
  Duplicate<half, false>(t, static_cast<half>(1.0f), MASK_PLACEHOLDER, 2, 1, 8);
  AscendCUtils::ResetMask();
  AscendCUtils::SetMaskNorm<half>();
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, t, 256);
  go.SetValue(0, go.GetValue(0) + static_cast<half>(static_cast<float>(AscendCUtils::GetC0Count(sizeof(half)) - 16)));
}

// AscendCUtils::SetOverflow(mode) then a half Duplicate, SetOverflow(1) and another; mode 2: SetOverflow(0) as the
// kernel's last call (CANN's layernorm_v2 sample ends so).
extern "C" __global__ __aicore__ void utils_overflow(GM_ADDR mode) {
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t m = gm.GetValue(0);
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  auto t = b.Get<half>();
  AscendCUtils::SetOverflow(m == 2 ? 1 : m);
  Duplicate(t, static_cast<half>(1.0f), 128);
  AscendCUtils::SetOverflow(1);
  Duplicate(t, static_cast<half>(2.0f), 128);
  if (m == 2) AscendCUtils::SetOverflow(0);
}

// printf / PRINTF / KERNEL_LOG print; mode 1 fails ASCENDC_ASSERT (its behavior runs first), mode 2 fails
// assert(expr, fmt, ...).
extern "C" __global__ __aicore__ void logs(GM_ADDR mode) {
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t m = g.GetValue(0);
  printf("printf %d\n", m);
  PRINTF("PRINTF %d\n", m + 1);
  AscendC::printf("AscendC::printf\n");
  KERNEL_LOG(KERNEL_INFO, "log %d", m + 2);
  ASCENDC_ASSERT(m != 1, { KERNEL_LOG(KERNEL_ERROR, "mode %d is refused", m); });
  assert(m != 2, "mode is %d", m);
  fflush(stdout);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, allocator, 3);
  OPKIT_EMU_PY_KERNEL(m, utils_overflow, 1);
  OPKIT_EMU_PY_KERNEL(m, fused_f32, 5);
  OPKIT_EMU_PY_KERNEL(m, fused_f16, 5);
  OPKIT_EMU_PY_KERNEL(m, fused_f16_f32, 5);
  OPKIT_EMU_PY_KERNEL(m, reduce_names, 2);
  OPKIT_EMU_PY_KERNEL(m, scalars, 1);
  OPKIT_EMU_PY_KERNEL(m, utils_mask, 2);
  OPKIT_EMU_PY_KERNEL(m, logs, 1);
}
