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
// Atomic GM writes (SetAtomicAdd / Max / Min copies, deferred to the launch's end otherwise) land at a completed
// SyncAll: each arriving block hands its pending ones to the barrier, and the last to arrive applies them all in
// block order before releasing anyone -- the launch-end order, so float sums are the same run to run. On the NPU an
// MTE3 copy is in GM once its pipe is done, and CANN's A2 SyncAll starts with PipeBarrier<PIPE_ALL>() (below).
// CrossCoreSetFlag<0, PIPE_MTE3> does the same per flagId round; IBSet / NotifyNextBlock / GroupBarrier apply the
// setter's own at once (apply_own_atomics).
#pragma once
#include <condition_variable>
#include <map>
#include <set>
#include <utility>
#include <mutex>

#include "opkit_emu/atomic_apply.h"
#include "opkit_emu/gm_pad.h"
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
  int64_t flag_sets[16] = {};  // CrossCoreSetFlag<0> calls per flagId, all blocks together
  // atomic GM writes handed over by CrossCoreSetFlag<0, PIPE_MTE3> in the flagId's current round, keyed by block
  std::map<int64_t, std::vector<AtomicRecord>> flag_atomics[16];
  int64_t flag_waiting = 0;    // blocks inside CrossCoreWaitFlag
  // GM flag waits (ib_sync.h): `epoch` counts the writes that may release a waiter, `checked` the waiters that
  // have looked at the state since the last one -- when every block waits or ended and all of them have, none can go on
  int64_t epoch = 0, checked = 0;
  std::set<int64_t> gm_waiters;     // blocks inside a GroupBarrier wait (group_barrier.h names them on a hang)
  std::set<int64_t> ended_blocks;   // blocks whose body returned normally
  // atomic GM writes handed over by the blocks waiting at the current SyncAll, keyed (and applied) by block index
  std::map<int64_t, std::vector<AtomicRecord>> atomics;
};
// Moves a block's pending atomic writes into `into` (keyed by block, so they are applied in block order).
OPKIT_EMU_RT void hand_over_atomics(BlockCtx& c, std::map<int64_t, std::vector<AtomicRecord>>& into);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void hand_over_atomics(BlockCtx& c, std::map<int64_t, std::vector<AtomicRecord>>& into) {
  if (c.atomics.empty()) return;
  std::vector<AtomicRecord>& mine = into[c.idx];
  for (AtomicRecord& r : c.atomics) mine.push_back(std::move(r));
  c.atomics.clear();
}
#endif
// A block about to publish a flag another block waits on at once (IBSet, NotifyNextBlock, GroupBarrier, a one-block
// SyncAll; lock held): its own pending atomic writes land first. On the NPU they are earlier MTE3 copies of this
// block, in GM once its pipe is done, so the waiter it releases sees them. In program order for the block; across
// blocks in the order the host threads get here (one setter handing over to one waiter: deterministic). A failed
// launch keeps them, as it keeps what a completed SyncAll applied (docs/emulator.md, SetAtomicAdd).
OPKIT_EMU_RT void apply_own_atomics(BlockCtx& c);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void apply_own_atomics(BlockCtx& c) {
  for (const AtomicRecord& r : c.atomics) atomic_apply(r);
  c.atomics.clear();
}
#endif
OPKIT_EMU_RT void apply_in_block_order(std::map<int64_t, std::vector<AtomicRecord>>& pending);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void apply_in_block_order(std::map<int64_t, std::vector<AtomicRecord>>& pending) {
  for (const auto& kv : pending)
    for (const AtomicRecord& r : kv.second) atomic_apply(r);
  pending.clear();
}
#endif
struct SyncAllRegistry {
  std::mutex mu;
  std::map<const void*, SyncAllBarrier> by_launch;  // key: the launch's GM region list (one per launch)
  static SyncAllRegistry& get() { static SyncAllRegistry r; return r; }
};
OPKIT_EMU_RT SyncAllBarrier& barrier_of(const BlockCtx& c);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT SyncAllBarrier& barrier_of(const BlockCtx& c) {
  SyncAllRegistry& r = SyncAllRegistry::get();
  std::lock_guard<std::mutex> lk(r.mu);
  SyncAllBarrier& b = r.by_launch[c.gm];
  if (b.num == 0) b.num = c.num;
  return b;
}
#endif

// Called by run_blocks when a block's body returns (ok) or throws (!ok).
OPKIT_EMU_RT void sync_all_block_done(const BlockCtx& c, bool ok);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void sync_all_block_done(const BlockCtx& c, bool ok) {
  if (!kernel_uses_sync_all()) return;
  SyncAllBarrier& b = barrier_of(c);
  std::lock_guard<std::mutex> lk(b.mu);
  b.done++;
  if (!ok) b.failed = true;
  else {
    if (b.ended_block < 0) b.ended_block = c.idx;
    b.ended_blocks.insert(c.idx);
  }
  // CrossCoreSetFlag rounds no block completed (nobody waits on them): their writes land once every block has ended,
  // before the launch-end ones (later in each block's program order); dropped with them if the launch failed
  if (b.done == b.num && !b.failed)
    for (auto& pending : b.flag_atomics) apply_in_block_order(pending);
  b.cv.notify_all();
}
#endif
// Called by run_blocks after every block has finished (every launch): the launch's barrier and padding poison go.
OPKIT_EMU_RT void sync_all_release(const void* launch);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void sync_all_release(const void* launch) {
  gm_pad_release(launch);
  SyncAllRegistry& r = SyncAllRegistry::get();
  std::lock_guard<std::mutex> lk(r.mu);
  r.by_launch.erase(launch);
}
#endif

OPKIT_EMU_RT void sync_all(SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void sync_all(SrcLoc loc) {
  BlockCtx& c = ctx();
  if (c.num == 1) {  // the block's own atomic writes are in GM after the barrier as well
    apply_own_atomics(c);
    return;
  }
  SyncAllBarrier& b = barrier_of(c);
  std::unique_lock<std::mutex> lk(b.mu);
  const int64_t gen = b.generation;
  // Handed over, not kept: if this SyncAll never completes (a block fails or ends first) the launch fails and they
  // are dropped with the block's later ones, as at the end of a failed launch.
  hand_over_atomics(c, b.atomics);
  if (++b.arrived == b.num) {
    // every block waits here, so GM is not touched by any other thread while the writes land
    apply_in_block_order(b.atomics);
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
#endif

// CrossCoreSetFlag / CrossCoreWaitFlag, mode 0 between vector cores (asc-devkit 82b89a15 docs/zh/api/SIMD-API/
// 基础API/同步控制/核间同步/CrossCoreSetFlag(ISASI).md): each flagId counts the blocks' sets; a block's k-th wait on a
// flag returns once every block of the launch has set it k times. A wait no set can release any more (the other
// blocks ended or wait too) is the hang the NPU would show: sync-all.
OPKIT_EMU_RT void cross_core_check(uint16_t flagId, const char* call, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void cross_core_check(uint16_t flagId, const char* call, SrcLoc loc) {
  if (flagId > 15) fail("api-argument", call, loc, strf("flagId %u is outside [0, 15] (modes 0-2)", flagId));
}
#endif
// mte3: the set is issued on PIPE_MTE3. ffts_cross_core_sync(pipe, ...) (asc-devkit 82b89a15
// impl/basic_api/dav_c220/kernel_operator_sync_impl.h:497) reports the core done "after its earlier tasks on that
// pipe" (CrossCoreSetFlag(ISASI).md:33), so only then are the block's MTE3 (atomic) copies known to be in GM; on any
// other pipe they stay pending (launch end, a SyncAll, or a later set on PIPE_MTE3).
// The setters hand their atomic writes to the flagId's round; the set that completes the round (every block has set
// it once more -- the point cross_core_wait releases its waiters at) applies them in block order, as SyncAll does,
// so float sums do not depend on which host thread got here first.
OPKIT_EMU_RT void cross_core_set(uint16_t flagId, bool mte3, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void cross_core_set(uint16_t flagId, bool mte3, SrcLoc loc) {
  cross_core_check(flagId, "CrossCoreSetFlag", loc);
  BlockCtx& c = ctx();
  SyncAllBarrier& b = barrier_of(c);
  std::lock_guard<std::mutex> lk(b.mu);
  if (mte3) hand_over_atomics(c, b.flag_atomics[flagId]);
  if (++b.flag_sets[flagId] % b.num == 0) apply_in_block_order(b.flag_atomics[flagId]);
  b.cv.notify_all();
}
#endif
OPKIT_EMU_RT void cross_core_wait(uint16_t flagId, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void cross_core_wait(uint16_t flagId, SrcLoc loc) {
  cross_core_check(flagId, "CrossCoreWaitFlag", loc);
  BlockCtx& c = ctx();
  const int64_t need = c.num * (int64_t(c.cross_core_waits[flagId]) + 1);
  SyncAllBarrier& b = barrier_of(c);
  std::unique_lock<std::mutex> lk(b.mu);
  b.flag_waiting++;
  b.cv.notify_all();
  b.cv.wait(lk, [&] { return b.flag_sets[flagId] >= need || b.failed || b.flag_waiting + b.done + b.arrived >= b.num; });
  b.flag_waiting--;
  if (b.flag_sets[flagId] >= need) {
    c.cross_core_waits[flagId]++;
    return;
  }
  if (b.failed) throw SyncAllAborted();
  fail("sync-all", "CrossCoreWaitFlag", loc,
       strf("flagId %u was set %lld times; this wait needs %lld (every one of %lld blocks, round %u), and no block "
            "left can set it (the NPU would hang)",
            flagId, (long long)b.flag_sets[flagId], (long long)need, (long long)c.num, c.cross_core_waits[flagId] + 1));
}
#endif

inline GM_ADDR& sys_workspace() { static thread_local GM_ADDR w = nullptr; return w; }

}  // namespace opkit_emu

namespace AscendC {

// The tag depends on the template arguments: a non-dependent SyncAllUser<void> would be instantiated with
// the header itself, marking every kernel a SyncAll user (one host thread per block on every launch).
template <bool isAIVOnly = true>
inline void SyncAll(OPKIT_LOC) {
  (void)opkit_emu::SyncAllUser<std::integral_constant<bool, isAIVOnly>>::registered;
  // CANN's A2 hardware SyncAll starts with PipeBarrier<PIPE_ALL>() (asc-devkit 82b89a15
  // impl/basic_api/dav_c220/kernel_operator_sync_impl.h:384): every pipe of this block is ordered across it.
  opkit_emu::ctx().hz.barrier_all();
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
  // CANN's A2 SoftSyncAllImpl also starts with PipeBarrier<PIPE_ALL>() (kernel_operator_sync_impl.h:70)
  opkit_emu::ctx().hz.barrier_all();
  opkit_emu::sync_all(loc);
}

// The flag ids CANN's own synchronisation uses (asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_sync_impl.h:117-120)
constexpr uint16_t SYNC_AIV_FLAG = 12;
constexpr uint16_t SYNC_AIC_FLAG = 11;
constexpr uint16_t SYNC_AIC_AIV_FLAG = 13;
constexpr uint16_t SYNC_AIV_ONLY_ALL = 14;
// Mode 0 only: modes 1 and 2 pair a vector core with its AI core's other vector core or with the cube core, which
// the emulator's blocks do not model.
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId, OPKIT_LOC) {
  static_assert(modeId == 0, "not supported on the emulator: CrossCoreSetFlag modes 1 and 2 (the AIV pair of an AI "
                             "core, the cube core)");
  static_assert(pipe != PIPE_S && pipe != PIPE_ALL, "CrossCoreSetFlag: PIPE_S and PIPE_ALL are not allowed");
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 1000 + modeId>>::registered;
  opkit_emu::cross_core_set(flagId, pipe == PIPE_MTE3, loc);
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, OPKIT_LOC) {
  static_assert(modeId == 0, "not supported on the emulator: CrossCoreWaitFlag modes 1 and 2 (the AIV pair of an AI "
                             "core, the cube core)");
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 1000 + modeId>>::registered;
  opkit_emu::cross_core_wait(flagId, loc);
}

inline void SetSysWorkspace(GM_ADDR workspace) { opkit_emu::sys_workspace() = workspace; }
inline GM_ADDR GetSysWorkSpacePtr() { return opkit_emu::sys_workspace(); }
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }

}  // namespace AscendC
