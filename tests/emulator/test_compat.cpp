// CANN CPU-debug names kernels use unqualified (core_info.h, debug.h, utils.h, sync.h): block_idx / block_num,
// g_coreType + ASCEND_IS_AIV, __CCE_AICORE__, AlignUp / DivCeil, float16_t / float32_t, likely,
// lower-case set_flag / wait_flag, ASSERT and ascendc_assert; element access `tensor(i)`, min / max at global
// scope (device_builtins.h), DataCacheCleanAndInvalid<T, CacheLine, DcciDst>.
#include "opkit_emu/pybind.h"
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

// out[8 * block + k]: facts a kernel can observe about itself.
extern "C" __global__ __aicore__ void facts(GM_ADDR out) {
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)out + 8 * get_block_idx(), 8);
  g.SetValue(0, static_cast<int32_t>(block_idx));
  g.SetValue(1, static_cast<int32_t>(block_num));
  g.SetValue(2, ASCEND_IS_AIV ? 1 : 0);
#if __CCE_AICORE__ == 220
  g.SetValue(3, 220);
#else
  g.SetValue(3, -1);
#endif
  g.SetValue(4, static_cast<int32_t>(AlignUp(33, 32) + DivCeil(65, 32)));
  float16_t h = 1.5f;
  float32_t f = h;
  g.SetValue(5, likely(f == 1.5f) ? 1 : 0);
  int64_t block_idx = 99;  // a kernel's own variable shadows the global
  g.SetValue(6, static_cast<int32_t>(block_idx));
  g.SetValue(7, static_cast<int32_t>(KernelMode::AIV_MODE));
}

// set_flag / wait_flag pairing: mode 0 paired, 1 wait without set.
extern "C" __global__ __aicore__ void flags(GM_ADDR mode) {
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  if (g.GetValue(0) == 0) set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
}

// ASSERT / ascendc_assert: mode 1 fails ASSERT, 2 fails ascendc_assert with a message, 3 fails an ASSERT written
// after an expression with no ';' (device builds' empty ASSERT); -1.5 comes through that expression unchanged.
extern "C" __global__ __aicore__ void asserts(GM_ADDR mode) {
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t m = g.GetValue(0);
  ASSERT(m != 1);
  const float kept = -1.5f * (m == 0 ? 1.0f : 0.0f) ASSERT(m != 3 && "mode 3");
  g.SetValue(0, m == 0 ? static_cast<int32_t>(kept * 2.0f) : m);
  ascendc_assert(m != 2, "mode is %d", m);
  ascendc_assert(m >= 0);
}

// SyncAll: mode 0 every block publishes idx+1, meets the others, and writes the sum of all; mode 1 block 1
// returns before the SyncAll (the NPU would hang); mode 2 block 2 breaks a rule before it.
extern "C" __global__ __aicore__ void syncall(GM_ADDR slots, GM_ADDR out, GM_ADDR mode) {
  GlobalTensor<int32_t> s, o, m;
  s.SetGlobalBuffer((__gm__ int32_t*)slots, block_num);
  o.SetGlobalBuffer((__gm__ int32_t*)out, block_num);
  m.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t md = m.GetValue(0);
  s.SetValue(block_idx, static_cast<int32_t>(block_idx) + 1);
  if (md == 1 && block_idx == 1) return;
  if (md == 2 && block_idx == 2) s.SetValue(block_num, 0);  // past the end: gm-bounds
  SyncAll();
  int32_t sum = 0;
  for (int64_t b = 0; b < block_num; ++b) sum += s.GetValue(b);
  o.SetValue(block_idx, sum);
}

// `tensor(i)` on GM and UB, unqualified min / max, DataCacheCleanAndInvalid. io[0] = mode: 0 computes, 1 reads a
// UB element nothing wrote through t(i) (ub-uninitialized at that line).
template <class T>
struct Clamp {
  T lo, hi;
  T operator()(T v) const { return min(max(v, lo), hi); }  // non-dependent lookup finds the global ones
};
extern "C" __global__ __aicore__ void elems(GM_ADDR io) {
  GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)io, 16);
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 256);
  LocalTensor<float> t = tb.Get<float>();
  if (g(0) == 1.0f) {
    float v = t(3);  // ELEM:uninit
    g(1) = v;
    return;
  }
  t(0) = g(2);            // UB <- GM through both references
  t(1) = t(0);
  t(1) *= 3.0f;
  t(1) += 0.5f;
  g(3) = t(1);            // 3 * g2 + 0.5
  g(4) = static_cast<float>(min(7u, 9u) + max(int64_t(-2), int64_t(5)));  // 7 + 5
  g(5) = Clamp<float>{0.0f, 1.0f}(g(2));
  GlobalTensor<half> h;   // halves 24..27 = floats 12..13 of io
  h.SetGlobalBuffer((__gm__ half*)io + 24, 4);
  g(6) = static_cast<float>(h(0)) * 2.0f;  // explicit conversion to another type, as from CANN's T&
  DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
  DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE>(g);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  OPKIT_EMU_PY_KERNEL(m, elems, 1);
  OPKIT_EMU_PY_KERNEL(m, syncall, 3);
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, facts, 1);
  OPKIT_EMU_PY_KERNEL(m, flags, 1);
  OPKIT_EMU_PY_KERNEL(m, asserts, 1);
}
