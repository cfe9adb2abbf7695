// System registers, caches and task hooks (opkit_emu/system.h): what each returns or does on the emulator.
// Doc pages (asc-devkit docs/zh/api/SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15): 特殊寄存器访问/
// {SetCtrlSpr,GetCtrlSpr}(ISASI).md, 调试接口/异常检测/Trap.md, 工具接口/系统资源与变量/
// {GetDataBlockSizeInBytes,GetProgramCounter(ISASI)}.md, 缓存控制/{ICachePreLoad,GetICachePreloadStatus}(ISASI).md,
// 缓存控制/{DataCacheCleanAndInvalid,DataCachePreload}.md,
// 同步控制/核内同步/DataSyncBarrier(ISASI).md, 同步控制/任务间同步/{SetNextTaskStart,WaitPreTaskEnd}.md,
// 调试接口/性能统计/MetricsProfStart.md.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// out = {GetCtrlSpr<48, 48>() before, after SetCtrlSpr<48, 48>(args[0])}; then args[1]: 0 nothing, 1 a float
// Adds, 2 a half Adds (the saturating mode changes half / bfloat16 results only).
extern "C" __global__ __aicore__ void ctrl_spr(GM_ADDR args, GM_ADDR out) {
  GlobalTensor<int64_t> ga, go;
  ga.SetGlobalBuffer((__gm__ int64_t*)args, 2);
  go.SetGlobalBuffer((__gm__ int64_t*)out, 2);
  go.SetValue(0, GetCtrlSpr<48, 48>());
  SetCtrlSpr<48, 48>(ga.GetValue(0));
  go.SetValue(1, GetCtrlSpr<48, 48>());
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  if (ga.GetValue(1) == 1) {
    auto t = b.Get<float>();
    Duplicate(t, 1.0f, 64);
    Adds(t, t, 1.0f, 64);
  } else if (ga.GetValue(1) == 2) {
    auto t = b.Get<half>();
    Duplicate(t, static_cast<half>(1.0f), 128);
    Adds(t, t, static_cast<half>(1.0f), 128);
  }
}

// mode 1 traps.
extern "C" __global__ __aicore__ void trap(GM_ADDR mode) {
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  if (g.GetValue(0) == 1) Trap();
}

// The values and the no-ops: out = {GetDataBlockSizeInBytes, GetICachePreloadStatus after ICachePreLoad,
// GetProgramCounter() != 0, 1 once every task / barrier / profiling hook has returned}.
extern "C" __global__ __aicore__ void values(GM_ADDR out) {
  GlobalTensor<int64_t> g;
  g.SetGlobalBuffer((__gm__ int64_t*)out, 4);
  g.SetValue(0, GetDataBlockSizeInBytes());
  ICachePreLoad(2);
  g.SetValue(1, GetICachePreloadStatus());
  g.SetValue(2, GetProgramCounter() != 0);
  WaitPreTaskEnd();
  MetricsProfStart();
  DataSyncBarrier<MemDsbT::ALL>();
  DataSyncBarrier<MemDsbT::UB>();
  MetricsProfStop();
  SetNextTaskStart();
  SetNextTaskStart<PIPE_MTE3, PIPE_FIX, true>();
  g.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
  g.SetL2CacheHint<CacheRwMode::READ>(CacheMode::CACHE_MODE_NORMAL);
  g.SetValue(3, 1);
}

// DataCacheCleanAndInvalid.md's example 1: scalar writes to GM, then the cache line is cleaned (every form of
// the call); out[i] = block index + 10 * i, and in[0] is read after a DataCachePreload of its line.
extern "C" __global__ __aicore__ void dcache(GM_ADDR in, GM_ADDR out) {
  GlobalTensor<uint64_t> g, gi;
  g.SetGlobalBuffer((__gm__ uint64_t*)out + GetBlockIdx() * 8, 8);
  gi.SetGlobalBuffer((__gm__ uint64_t*)in, 1);
  DataCachePreload(gi, int64_t(0));
  for (int i = 0; i < 7; i++) g.SetValue(i, GetBlockIdx() + 10 * i);
  DataCacheCleanAndInvalid<uint64_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
  DataCacheCleanAndInvalid<uint64_t, CacheLine::ENTIRE_DATA_CACHE>(g);
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 32);
  DataCacheCleanAndInvalid<uint64_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_UB>(b.Get<uint64_t>());
  g.SetValue(7, gi.GetValue(0));
  DataCacheCleanAndInvalid<uint64_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_ALL>(g);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, ctrl_spr, 2);
  OPKIT_EMU_PY_KERNEL(m, trap, 1);
  OPKIT_EMU_PY_KERNEL(m, values, 1);
  OPKIT_EMU_PY_KERNEL(m, dcache, 2);
}
