// SyncAll (all blocks of a launch meet; GM written before it is visible to every block after it) and the
// workspace calls around it: SetSysWorkspace / GetSysWorkSpacePtr / GetUserWorkspace.
// Doc: asc-devkit docs/api/SIMD-API/基础API/同步控制/核间同步/SyncAll.md (mirror-cann/asc-devkit 7359511d).
// On the device the software SyncAll keeps its counters in the system workspace the launcher reserves
// in front of the user's; here the emulator's launch owns the barrier, so every pointer the kernel
// passes works, GetUserWorkspace(w) is w itself (the launcher's system part is not carved out of the
// user's buffer), and GetSysWorkSpacePtr() returns what SetSysWorkspace stored.
// A kernel that calls SyncAll makes its launches run every block on its own host thread (a barrier
// needs all blocks alive); if one block fails or ends without reaching a SyncAll the others reach,
// the waiting blocks stop instead of hanging (the device would hang).
#pragma once
#include <condition_variable>
#include <map>
#include <mutex>

#include "opkit_emu/runtime.h"

namespace opkit_emu {

// Set at load time by the first instantiation of SyncAll<> in this module (see SyncAllUser below).
inline bool& kernel_uses_sync_all() { static bool used = false; return used; }
template <class Tag> struct SyncAllUser {
  static inline const bool registered = (kernel_uses_sync_all() = true);
};

// A waiting block gives up because another block failed first: not the error to report.
struct SyncAllAborted : std::exception {
  const char* what() const noexcept override { return "SyncAll aborted: another block failed"; }
};

struct SyncAllBarrier {
  std::mutex mu;
  std::condition_variable cv;
  int64_t num = 0, arrived = 0, done = 0, generation = 0;
  bool failed = false;
  int64_t ended_block = -1;  // a block that ended normally while others wait
};
struct SyncAllRegistry {
  std::mutex mu;
  std::map<const void*, SyncAllBarrier> by_launch;  // key: the launch's GM region list (one per launch)
  static SyncAllRegistry& get() { static SyncAllRegistry r; return r; }
};
inline SyncAllBarrier& barrier_of(const BlockCtx& c) {
  SyncAllRegistry& r = SyncAllRegistry::get();
  std::lock_guard<std::mutex> lk(r.mu);
  SyncAllBarrier& b = r.by_launch[c.gm];
  if (b.num == 0) b.num = c.num;
  return b;
}

// Called by run_blocks when a block's body returns (ok) or throws (!ok).
inline void sync_all_block_done(const BlockCtx& c, bool ok) {
  if (!kernel_uses_sync_all()) return;
  SyncAllBarrier& b = barrier_of(c);
  std::lock_guard<std::mutex> lk(b.mu);
  b.done++;
  if (!ok) b.failed = true;
  else if (b.ended_block < 0) b.ended_block = c.idx;
  b.cv.notify_all();
}
// Called by run_blocks after every block has finished.
inline void sync_all_release(const void* launch) {
  SyncAllRegistry& r = SyncAllRegistry::get();
  std::lock_guard<std::mutex> lk(r.mu);
  r.by_launch.erase(launch);
}

inline void sync_all(SrcLoc loc) {
  BlockCtx& c = ctx();
  if (c.num == 1) return;
  SyncAllBarrier& b = barrier_of(c);
  std::unique_lock<std::mutex> lk(b.mu);
  const int64_t gen = b.generation;
  if (++b.arrived == b.num) {
    b.arrived = 0;
    b.generation++;
    b.cv.notify_all();
    return;
  }
  b.cv.wait(lk, [&] { return b.generation != gen || b.failed || b.done > 0; });
  if (b.generation != gen) return;
  if (b.failed) throw SyncAllAborted();
  fail("sync-all", "SyncAll", loc,
       strf("block %lld ended without reaching this SyncAll, which %lld of %lld blocks reached (the NPU would hang)",
            (long long)b.ended_block, (long long)b.arrived, (long long)b.num));
}

inline GM_ADDR& sys_workspace() { static thread_local GM_ADDR w = nullptr; return w; }

}  // namespace opkit_emu

namespace AscendC {

// The tag depends on the template arguments: a non-dependent SyncAllUser<void> would be instantiated with
// the header itself, marking every kernel a SyncAll user (one host thread per block on every launch).
template <bool isAIVOnly = true>
inline void SyncAll(OPKIT_LOC) {
  (void)opkit_emu::SyncAllUser<std::integral_constant<bool, isAIVOnly>>::registered;
  opkit_emu::sync_all(loc);
}
// The GM-workspace form (gmWorkspace, ubWorkspace, usedCores) of earlier releases.
template <bool isAIVOnly = true, class G, class U>
inline void SyncAll(const G& gmWorkspace, const U& ubWorkspace, const int32_t usedCores = 0, OPKIT_LOC) {
  (void)gmWorkspace;
  (void)ubWorkspace;
  (void)opkit_emu::SyncAllUser<G>::registered;
  if (usedCores != 0 && usedCores != opkit_emu::ctx().num)
    opkit_emu::fail("sync-all", "SyncAll", loc,
                    opkit_emu::strf("usedCores %d differs from the launch's %lld blocks: only full-launch SyncAll is "
                                    "emulated",
                                    usedCores, (long long)opkit_emu::ctx().num));
  opkit_emu::sync_all(loc);
}

inline void SetSysWorkspace(GM_ADDR workspace) { opkit_emu::sys_workspace() = workspace; }
inline GM_ADDR GetSysWorkSpacePtr() { return opkit_emu::sys_workspace(); }
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }

}  // namespace AscendC
