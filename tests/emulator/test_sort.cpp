// Sort32, MrgSort, GetMrgSortResult, Concat / Extract / Sort / GetSortLen / GetSortOffset (opkit_emu/sort.h).
// Doc pages (asc-devkit docs/zh/api/SIMD-API/ at mirror-cann/asc-devkit 82b89a15): 基础API/Memory矢量计算/排序组合
// （ISASI）/{Sort32,MrgSort,GetMrgSortResult}.md, 高阶API/排序操作/*.md.
#include "opkit_emu/pybind.h"

using namespace AscendC;

template <class T>
struct Ub {  // scores (n of T), indexes (n uint32_t) and an output area in UB, each 256-byte aligned
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  LocalTensor<T> s, out, tmp;
  LocalTensor<uint32_t> idx;
  Ub(GM_ADDR x, GM_ADDR index, uint32_t n) {
    pipe.InitBuffer(b, 4 * n * 8 + 1024);
    s = b.GetWithOffset<T>(n, 0);
    idx = b.GetWithOffset<uint32_t>(n, (n * 4 + 255) / 256 * 256);
    out = b.GetWithOffset<T>(n * 8 / sizeof(T), (n * 8 + 255) / 256 * 256 * 2);
    tmp = b.GetWithOffset<T>(n * 8 / sizeof(T), (n * 8 + 255) / 256 * 256 * 3);
    GlobalTensor<T> gx;
    GlobalTensor<uint32_t> gi;
    gx.SetGlobalBuffer((__gm__ T*)x, n);
    gi.SetGlobalBuffer((__gm__ uint32_t*)index, n);
    DataCopy(s, gx, n);
    DataCopy(idx, gi, n);
    PipeBarrier<PIPE_ALL>();
  }
  template <class U> void put(GM_ADDR y, const LocalTensor<U>& t, uint32_t count) {
    GlobalTensor<U> gy;
    gy.SetGlobalBuffer((__gm__ U*)y, count);
    PipeBarrier<PIPE_ALL>();
    DataCopy(gy, t, count);
  }
};

// Sort32 over 64 scores (2 repeats); mode 1 places dst 32 bytes off its 256-byte alignment.
template <class T>
__aicore__ void sort32_kernel(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR mode) {
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  Ub<T> u(x, index, 64);
  LocalTensor<T> d = gm.GetValue(0) == 1 ? u.out[32 / sizeof(T)] : u.out;
  Sort32(d, u.s, u.idx, 2);
  u.put(y, u.out, 64 * 8 / sizeof(T));
}
extern "C" __global__ __aicore__ void sort32_f32(GM_ADDR x, GM_ADDR i, GM_ADDR y, GM_ADDR m) { sort32_kernel<float>(x, i, y, m); }
extern "C" __global__ __aicore__ void sort32_f16(GM_ADDR x, GM_ADDR i, GM_ADDR y, GM_ADDR m) { sort32_kernel<half>(x, i, y, m); }

// 128 float scores: Sort32 in 4 repeats, then MrgSort of the four sorted 32-element queues with lengths
// args[0..3] (taken from the front of each queue), validBit args[4], ifExhaustedSuspension args[5]; the four
// GetMrgSortResult counts go after the result. mode args[6]: 1 uses the sortedNum form, 2 repeatTimes 2 over
// 4 queues of 16 (each queue 16 of its Sort32 block: contiguous as 64-element halves), validBit and suspension
// from args.
extern "C" __global__ __aicore__ void mrg_sort(GM_ADDR x, GM_ADDR index, GM_ADDR args, GM_ADDR y) {
  GlobalTensor<int32_t> ga;
  ga.SetGlobalBuffer((__gm__ int32_t*)args, 7);
  Ub<float> u(x, index, 128);
  Sort32(u.tmp, u.s, u.idx, 4);
  PipeBarrier<PIPE_V>();
  uint16_t len[4];
  for (int k = 0; k < 4; ++k) len[k] = static_cast<uint16_t>(ga.GetValue(k));
  const uint16_t valid = static_cast<uint16_t>(ga.GetValue(4));
  const bool susp = ga.GetValue(5) != 0;
  const int32_t mode = ga.GetValue(6);
  uint16_t got[4] = {0, 0, 0, 0};
  Duplicate(u.out.ReinterpretCast<uint32_t>(), 0u, 256);  // a merge shorter than 128 leaves the rest unwritten
  PipeBarrier<PIPE_V>();
  if (mode == 2) {
    MrgSortSrcList<float> l(u.tmp, u.tmp[32], u.tmp[64], u.tmp[96]);  // 4 queues of 16 elements, contiguous
    uint16_t l16[4] = {16, 16, 16, 16};
    MrgSort(u.out, l, MrgSort4Info(l16, susp, valid, 2));
  } else {
    MrgSortSrcList<float> l(u.tmp, u.tmp[64], u.tmp[128], u.tmp[192]);
    if (mode == 1) {
      uint32_t sorted[4] = {0, 0, 0, 0};
      if (susp) MrgSort<float, true>(u.out, l, len, sorted, valid, 1);
      else MrgSort<float, false>(u.out, l, len, sorted, valid, 1);
      for (int k = 0; k < 4; ++k) got[k] = static_cast<uint16_t>(sorted[k]);
    } else {
      MrgSort(u.out, l, MrgSort4Info(len, susp, valid, 1));
      GetMrgSortResult(got[0], got[1], got[2], got[3]);
    }
  }
  GlobalTensor<uint32_t> gy;
  gy.SetGlobalBuffer((__gm__ uint32_t*)y, 256 + 4);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, u.out.ReinterpretCast<uint32_t>(), 256);
  for (int k = 0; k < 4; ++k) gy.SetValue(256 + k, got[k]);
}

// The high-level path: Concat, Sort<T, true> over 4 repeats (128 elements), Extract; y = values then indexes,
// then GetSortLen<T>(128) and GetSortOffset<T>(5).
template <class T>
__aicore__ void full_sort_kernel(GM_ADDR x, GM_ADDR index, GM_ADDR y) {
  Ub<T> u(x, index, 128);
  LocalTensor<T> concat;
  Concat(concat, u.s, u.tmp, 8);
  Sort<T, true>(u.out, concat, u.idx, u.tmp, 4);
  PipeBarrier<PIPE_V>();
  LocalTensor<T> values = u.s;             // reuse the input buffers for the result
  LocalTensor<uint32_t> indexes = u.idx;
  Extract(values, indexes, u.tmp, 4);      // tmp holds the sorted list too
  GlobalTensor<T> gv;
  GlobalTensor<uint32_t> gi;
  gv.SetGlobalBuffer((__gm__ T*)y, 128);
  gi.SetGlobalBuffer((__gm__ uint32_t*)(y + 128 * sizeof(T)), 130);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gv, values, 128);
  DataCopy(gi, indexes, 128);
  PipeBarrier<PIPE_ALL>();
  gi.SetValue(128, GetSortLen<T>(128));
  gi.SetValue(129, GetSortOffset<T>(5));
}
extern "C" __global__ __aicore__ void full_sort_f32(GM_ADDR x, GM_ADDR i, GM_ADDR y) { full_sort_kernel<float>(x, i, y); }
extern "C" __global__ __aicore__ void full_sort_f16(GM_ADDR x, GM_ADDR i, GM_ADDR y) { full_sort_kernel<half>(x, i, y); }

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, sort32_f32, 4);
  OPKIT_EMU_PY_KERNEL(m, sort32_f16, 4);
  OPKIT_EMU_PY_KERNEL(m, mrg_sort, 4);
  OPKIT_EMU_PY_KERNEL(m, full_sort_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, full_sort_f16, 3);
}
