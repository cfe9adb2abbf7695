// System registers, caches and task-level hooks that have nothing to do on a CPU: what each returns or does
// here, with the page it follows (asc-devkit docs/zh/api/SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15):
//  - GetDataBlockSizeInBytes: 32 (工具接口/系统资源与变量/GetDataBlockSizeInBytes.md);
//  - GetProgramCounter: the host's code address of the caller (…/GetProgramCounter(ISASI).md: "the program
//    counter, to trace where the program runs");
//  - Trap: "in CPU mode the same as assert" (调试接口/异常检测/Trap.md): rule kernel-assert;
//  - DataSyncBarrier<MemDsbT>: scalar memory accesses already complete in program order here
//    (同步控制/核内同步/DataSyncBarrier(ISASI).md);
//  - ICachePreLoad / GetICachePreloadStatus: no instruction cache; the preload is always done (0)
//    (缓存控制/ICachePreLoad(ISASI).md, GetICachePreloadStatus(ISASI).md);
//  - DataCacheCleanAndInvalid / DataCachePreload: in datacopy.h;
//  - SetNextTaskStart / WaitPreTaskEnd: "on A2 only compile compatibility, no effect"
//    (同步控制/任务间同步/SetNextTaskStart.md, WaitPreTaskEnd.md);
//  - MetricsProfStart / MetricsProfStop: msOpProf markers (调试接口/性能统计/MetricsProfStart.md);
//  - SetCtrlSpr / GetCtrlSpr: A2 has CTRL[48] only (特殊寄存器访问/SetCtrlSpr(ISASI).md; CANN's A2 build
//    static_asserts startBit == endBit == 48, impl/basic_api/dav_c220/kernel_operator_common_impl.h).
//    CTRL[48] = 1 is the non-saturating mode (inf / NaN results kept), which is how the emulator computes and
//    every block starts (the page's A2 table gives the register's reset value as 0; what a kernel meets is the
//    mode the runtime set, aclrtSetDeviceSatMode). SetCtrlSpr<48, 48>(0), the saturating mode, is recorded
//    (GetCtrlSpr reads it back); a vector call on 16-bit lanes while it holds stops with rule not-emulated
//    (api_call.h), float calls run unchanged, as the mode changes half / bfloat16 results only.
#pragma once
#include "opkit_emu/runtime.h"

// PRELOAD(len): an instruction-cache preload of the code that follows; CANN's CPU-debug build defines it empty
// (asc-devkit 82b89a15 impl/basic_api/utils/kernel_utils_ceil_oom_que.h:25-27), as here (no instruction cache).
#define PRELOAD(len) \
  {}

namespace AscendC {

// The id type of Mutex (asc-devkit 82b89a15 include/basic_api/kernel_common.h:143); Mutex itself is not on A2
// (unsupported.h): the alias is a name a kernel may declare.
using MutexID = uint8_t;
// Barrier(): a compiler memory barrier, as CANN's CPU-debug build defines it (asc-devkit 82b89a15
// impl/basic_api/dav_c220/kfc/kfc_comm.h:44-51, reached through kernel_operator.h; ops-math
// experimental/math/reduce_prod_v2 calls it after SyncAll). No instruction: the emulator's blocks see GM in order.
inline void Barrier() { __asm__ __volatile__("" ::: "memory"); }

enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };

constexpr int16_t GetDataBlockSizeInBytes() { return 32; }

__attribute__((noinline)) inline int64_t GetProgramCounter() {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

inline void Trap(OPKIT_LOC) { opkit_emu::fail("kernel-assert", "Trap", loc, "Trap() stops the kernel"); }

template <MemDsbT arg0>
inline void DataSyncBarrier() {}

inline void ICachePreLoad(const int64_t) {}
inline int64_t GetICachePreloadStatus() { return 0; }

template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX, bool FORCE = false>
inline void SetNextTaskStart() {}
template <bool FORCE = false>
inline void WaitPreTaskEnd() {}

inline void MetricsProfStart() {}
inline void MetricsProfStop() {}

template <int8_t startBit, int8_t endBit>
inline void SetCtrlSpr(int64_t value, OPKIT_LOC) {
  static_assert(startBit == endBit && startBit == 48, "startBit and endBit must be both 48 on current platform!");
  if (value != 0 && value != 1)
    opkit_emu::fail("api-argument", "SetCtrlSpr", loc,
                    opkit_emu::strf("CTRL[48] is one bit: value %lld", static_cast<long long>(value)));
  opkit_emu::ctx().saturating = value == 0 ? loc : opkit_emu::SrcLoc{nullptr, 0};
}
template <int8_t startBit, int8_t endBit>
inline int64_t GetCtrlSpr() {
  static_assert(startBit == endBit && startBit == 48, "startBit and endBit must be both 48 on current platform!");
  return opkit_emu::ctx().saturating.line ? 0 : 1;
}

}  // namespace AscendC
