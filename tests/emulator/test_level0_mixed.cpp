// Level-0 Cast and compound instructions (opkit_emu/level0_mixed.h). Doc pages (asc-devkit docs/zh/api/SIMD-API/
// 基础API/Memory矢量计算/ at mirror-cann/asc-devkit 82b89a15): 类型转换/Cast.md (its level-0 examples),
// 复合计算/{Axpy,MulAddDst,FusedMulAdd,MulAddRelu,AddRelu,SubRelu}.md, SIMD计算说明/高维切分.md.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// dst (D) starts as y's contents; a (S) and b (S) from x0, x1. mode selects the call (see test_level0_mixed.py).
template <class D, class S>
__aicore__ void run(GM_ADDR x0, GM_ADDR x1, GM_ADDR y, GM_ADDR mode) {
  constexpr uint32_t n = 1024;
  GlobalTensor<S> g0, g1;
  GlobalTensor<D> gy;
  GlobalTensor<int32_t> gm;
  g0.SetGlobalBuffer((__gm__ S*)x0, n);
  g1.SetGlobalBuffer((__gm__ S*)x1, n);
  gy.SetGlobalBuffer((__gm__ D*)y, n);
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bd;
  pipe.InitBuffer(ba, n * sizeof(S));
  pipe.InitBuffer(bb, n * sizeof(S));
  pipe.InitBuffer(bd, n * sizeof(D));
  LocalTensor<S> a = ba.Get<S>(), b = bb.Get<S>();
  LocalTensor<D> d = bd.Get<D>();
  DataCopy(a, g0, n);
  DataCopy(b, g1, n);
  DataCopy(d, gy, n);
  PipeBarrier<PIPE_ALL>();
  uint64_t bits[2] = {0x5555555555555555ull, 0xF0F0F0F0F0F0F0F0ull};
  switch (gm.GetValue(0)) {
    case 0:  // Cast.md: half -> int32_t, CAST_CEIL, 64 lanes (int32_t), 8 repeats, {1, 1, 8, 4}
      if constexpr (std::is_same<D, int32_t>::value && std::is_same<S, half>::value)
        Cast(d, a, RoundMode::CAST_CEIL, 64, 8, {1, 1, 8, 4});
      break;
    case 1:  // Cast.md: the first 32 lanes of each repeat only
      if constexpr (std::is_same<D, int32_t>::value && std::is_same<S, half>::value)
        Cast(d, a, RoundMode::CAST_CEIL, 32, 8, {1, 1, 8, 4});
      break;
    case 2:  // float -> half, bit mask (64 lanes: mask[0] only), dst strides in half's DataBlocks
      if constexpr (std::is_same<D, half>::value && std::is_same<S, float>::value)
        Cast(d, a, RoundMode::CAST_TRUNC, bits, 4, {1, 1, 4, 8});
      break;
    case 3:  // the mask register (isSetMask = false), Counter mode: 100 elements
      if constexpr (std::is_same<D, half>::value && std::is_same<S, float>::value) {
        SetMaskCount();
        SetVectorMask<float, MaskMode::COUNTER>(0, 100);
        Cast<half, float, false>(d, a, RoundMode::CAST_NONE, MASK_PLACEHOLDER, 1, {1, 1, 4, 8});
        SetMaskNorm();
        ResetMask();
      }
      break;
    case 4:  // Axpy half -> float: dst = 0.5 * a + dst
      if constexpr (std::is_same<D, float>::value && std::is_same<S, half>::value)
        Axpy(d, a, static_cast<half>(0.5f), 64, 4, {1, 1, 8, 4});
      break;
    case 5:  // MulAddDst half -> float: dst = a * b + dst
      if constexpr (std::is_same<D, float>::value && std::is_same<S, half>::value)
        MulAddDst(d, a, b, bits, 4, {1, 1, 1, 8, 4, 4});
      break;
    case 6:  // FusedMulAdd float: dst = a * dst + b, with a gap between repeats
      if constexpr (std::is_same<D, S>::value && !std::is_integral<D>::value) FusedMulAdd(d, a, b, 48, 3, {1, 1, 1, 16, 16, 16});
      break;
    case 7:  // FusedMulAddRelu / MulAddRelu
      if constexpr (std::is_same<D, S>::value && !std::is_integral<D>::value) {
        FusedMulAddRelu(d, a, b, bits, 2, {});
        MulAddRelu(d[512 / sizeof(D) * 2], a[512 / sizeof(D) * 2], b[512 / sizeof(D) * 2], 64, 2, {});
      }
      break;
    case 8:  // AddRelu then SubRelu on the next repeats
      if constexpr (std::is_same<D, S>::value) {
        AddRelu(d, a, b, 256 / sizeof(D), 2, {});
        SubRelu(d[512 / sizeof(D)], a[512 / sizeof(D)], b[512 / sizeof(D)], bits, 2, {});
      }
      break;
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, d, n);
}
extern "C" __global__ __aicore__ void h2i(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR m) { run<int32_t, half>(a, b, y, m); }
extern "C" __global__ __aicore__ void f2h(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR m) { run<half, float>(a, b, y, m); }
extern "C" __global__ __aicore__ void h2f(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR m) { run<float, half>(a, b, y, m); }
extern "C" __global__ __aicore__ void f32(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR m) { run<float, float>(a, b, y, m); }
extern "C" __global__ __aicore__ void f16(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR m) { run<half, half>(a, b, y, m); }
extern "C" __global__ __aicore__ void i16(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR m) { run<int16_t, int16_t>(a, b, y, m); }

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, h2i, 4);
  OPKIT_EMU_PY_KERNEL(m, f2h, 4);
  OPKIT_EMU_PY_KERNEL(m, h2f, 4);
  OPKIT_EMU_PY_KERNEL(m, f32, 4);
  OPKIT_EMU_PY_KERNEL(m, f16, 4);
  OPKIT_EMU_PY_KERNEL(m, i16, 4);
}
