// GroupBarrier<PipeMode>: arriveSize vector blocks Arrive, waitSize vector blocks Wait until all of them have, through
// counters in a GM workspace. Declared in asc-devkit 82b89a15 include/basic_api/core_mng/roc/
// kernel_operator_group_barrier_intf.h:38-58; CANN's A2 implementation (impl/basic_api/dav_c220/core_mng/roc/
// kernel_operator_group_barrier_impl.h:27-150 and kernel_operator_cube_group_info.h:30-34, read, not copied):
// - the workspace holds two counters per index i < max(arriveSize, waitSize), each the first uint32 of a 64-byte
//   BarrierInfo (impl/basic_api/utils/kernel_utils_cube_group.h:33-36): the arrive counter at i * 512 bytes, the wait
//   counter at 64 + i * 512 (CACHE_LINE_LEN 512, BARRIER_SIZE 64); GetWorkspaceLen() is max(...) * 512 (:124);
// - Arrive(i): from the second round on, spins until wait counter i is (round - 1) * waitSize (the previous round's
//   waiters are through, :72-81), then atomically adds 1 to every arrive counter (one MTE3 copy with SetAtomicAdd,
//   :129-149); Wait(i): spins until arrive counter i is >= round * arriveSize (:96-102), then adds 1 to every wait
//   counter; a block's round goes up once per Arrive-or-Wait pair (:83, :104);
// - the constructor asserts PipeMode::MTE3_MODE and 0 < arriveSize, waitSize <= GetBlockNum() (:31-47), and writes 1
//   into the first int32 of each of the 50 32-byte blocks at the top of UB (UB_START_ADDR = TOTAL_UB_SIZE - 32 * 50,
//   :57-64), the source of the atomic adds -- so a kernel buffer there is overwritten, on the NPU as here.
// The spins are waits on the launch's condition variable (the blocks run on their own host threads, as for SyncAll);
// a wait no block left can release -- the others ended, or wait too -- is the hang the NPU would show: rule sync-all,
// naming the waiting and the ended blocks. Bad sizes and indices are api-argument, a workspace too small gm-bounds.
#pragma once
#include "opkit_emu/ib_sync.h"
#include "opkit_emu/launch.h"

namespace AscendC {
// GroupBarrier's mode (impl/basic_api/utils/kernel_utils_cube_group.h:23); A2 has MTE3_MODE only.
enum class PipeMode : uint8_t { SCALAR_MODE = 0, MTE3_MODE = 1, MAX };
}  // namespace AscendC

namespace opkit_emu {

constexpr uint32_t kBarrierLine = 512;    // CACHE_LINE_LEN
constexpr uint32_t kBarrierWaitOff = 64;  // BARRIER_SIZE: the wait counters follow the arrive counters by 64 bytes
constexpr uint32_t kBarrierMaxAiv = 50;   // BARRIER_MAX_AIV

inline std::string block_list(const std::set<int64_t>& s) {
  if (s.empty()) return "none";
  std::string r;
  for (int64_t b : s) r += (r.empty() ? "" : ", ") + std::to_string(b);
  return r;
}

// Spins (on the condition variable) until *counter reaches `want` (exact when `exact`, else at least).
inline void group_barrier_spin(volatile uint32_t* counter, uint32_t want, bool exact, const char* call, uint32_t index,
                               const char* what, SrcLoc loc) {
  BlockCtx& c = ctx();
  SyncAllBarrier& b = barrier_of(c);
  std::unique_lock<std::mutex> lk(b.mu);
  auto ready = [&] { return exact ? *counter == want : *counter >= want; };
  b.gm_waiters.insert(c.idx);
  gm_flag_wait(b, lk, ready);
  if (ready()) {
    b.gm_waiters.erase(c.idx);
    return;
  }
  std::set<int64_t> others = b.gm_waiters;
  others.erase(c.idx);
  b.gm_waiters.erase(c.idx);
  if (b.failed) throw SyncAllAborted();
  fail("sync-all", call, loc,
       strf("block %lld waits for %s counter %u to reach %u and it stays %u: no block left can add to it (blocks "
            "waiting on a GroupBarrier too: %s; blocks ended: %s) -- the NPU would hang",
            (long long)c.idx, what, index, want, uint32_t(*counter), block_list(others).c_str(),
            block_list(b.ended_blocks).c_str()));
}

}  // namespace opkit_emu

namespace AscendC {

template <PipeMode pipeMode>
class GroupBarrier {
 public:
  GroupBarrier(GM_ADDR groupWorkspace, uint32_t arriveSizeIn, uint32_t waitSizeIn, OPKIT_LOC)
      : ws_(groupWorkspace), arriveSize_(arriveSizeIn), waitSize_(waitSizeIn) {
    (void)opkit_emu::SyncAllUser<std::integral_constant<int, 2200 + int(pipeMode)>>::registered;
    const char* call = "GroupBarrier";
    if (pipeMode != PipeMode::MTE3_MODE)
      opkit_emu::fail("api-argument", call, loc, "GroupBarrier supports PipeMode::MTE3_MODE only (CANN's A2 assert)");
    const int64_t n = opkit_emu::ctx().num;
    if (arriveSizeIn == 0 || waitSizeIn == 0 || arriveSizeIn > n || waitSizeIn > n)
      opkit_emu::fail("api-argument", call, loc,
                      opkit_emu::strf("arriveSize %u and waitSize %u must be in [1, GetBlockNum() = %lld]",
                                      arriveSizeIn, waitSizeIn, (long long)n));
    const uint32_t lines = std::max(arriveSize_, waitSize_);
    // The last bytes the counters' writes touch: the wait counter of the last index, one 32-byte burst.
    opkit_emu::gm_check(ws_, uint64_t(lines - 1) * opkit_emu::kBarrierLine + opkit_emu::kBarrierWaitOff + 32, call,
                        loc, "groupWorkspace");
    uint8_t* ub = opkit_emu::ctx().ub + opkit_emu::kChip.ub_total_bytes - 32 * opkit_emu::kBarrierMaxAiv;
    for (uint32_t i = 0; i < opkit_emu::kBarrierMaxAiv; ++i) {
      const int32_t one = 1;
      std::memcpy(ub + 32 * i, &one, sizeof(one));
    }
    // CANN writes 4 bytes of each 32 (group_barrier_impl.h:62-64): the other 28 keep their state
    for (uint32_t i = 0; i < opkit_emu::kBarrierMaxAiv; ++i)
      opkit_emu::shadow_set(opkit_emu::kChip.ub_total_bytes - 32 * (opkit_emu::kBarrierMaxAiv - i), 4);
  }
  void Arrive(uint32_t arriveIndex, OPKIT_LOC) {
    check_index(arriveIndex, "GroupBarrier::Arrive", "arriveIndex", loc);
    if (counter_ > 1)
      opkit_emu::group_barrier_spin(counter_at(opkit_emu::kBarrierWaitOff, arriveIndex), (counter_ - 1) * waitSize_,
                                    true, "GroupBarrier::Arrive", arriveIndex, "the previous round's wait", loc);
    add_one(0);
    counter_ += 1;
    hasArrive_ = true;
  }
  void Wait(uint32_t waitIndex, OPKIT_LOC) {
    check_index(waitIndex, "GroupBarrier::Wait", "waitIndex", loc);
    const uint32_t round = hasArrive_ ? counter_ - 1 : counter_;
    opkit_emu::group_barrier_spin(counter_at(0, waitIndex), round * arriveSize_, false, "GroupBarrier::Wait",
                                  waitIndex, "the arrive", loc);
    add_one(opkit_emu::kBarrierWaitOff);
    if (!hasArrive_) counter_ += 1;
    hasArrive_ = false;
  }
  uint64_t GetWorkspaceLen() const { return uint64_t(std::max(arriveSize_, waitSize_)) * opkit_emu::kBarrierLine; }

 private:
  GroupBarrier() = delete;
  volatile uint32_t* counter_at(uint32_t area, uint32_t index) const {
    return reinterpret_cast<volatile uint32_t*>(ws_ + area + uint64_t(index) * opkit_emu::kBarrierLine);
  }
  void check_index(uint32_t index, const char* call, const char* name, opkit_emu::SrcLoc loc) const {
    // CANN does not check it; an index past max(arriveSize, waitSize) reads a counter no block writes (a hang)
    const uint32_t lines = std::max(arriveSize_, waitSize_);
    if (index >= lines)
      opkit_emu::fail("api-argument", call, loc,
                      opkit_emu::strf("%s %u is not below max(arriveSize, waitSize) = %u: no block writes that counter",
                                      name, index, lines));
  }
  // The atomic add of every counter of one area (one MTE3 copy under SetAtomicAdd<int32_t>, under the lock). The
  // block's earlier atomic GM writes, which the emulator otherwise applies at the end of the launch, land first: on
  // the NPU they are earlier copies on the same MTE3 queue, so a block past the barrier sees them (CANN's sample
  // group_barrier atomically adds its output, then arrives). They go in host-thread arrival order, not block order:
  // Arrive / Wait do not wait for the round, so holding them back until the round completes would leave a block
  // running on while its own writes are not yet in GM. Float sums flushed here are therefore order-dependent, and a
  // failed launch keeps them (docs/emulator.md, SetAtomicAdd).
  void add_one(uint32_t area) {
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    opkit_emu::SyncAllBarrier& b = opkit_emu::barrier_of(c);
    std::lock_guard<std::mutex> lk(b.mu);
    opkit_emu::apply_own_atomics(c);
    // the increment is UB block i's first int32 at the time of the copy, as on the NPU (group_barrier_impl.h:139-146):
    // 1 as the constructor wrote it, unless the kernel has written over it since (then the NPU's barrier breaks too)
    const uint8_t* inc = c.ub + opkit_emu::kChip.ub_total_bytes - 32 * opkit_emu::kBarrierMaxAiv;
    for (uint32_t i = 0, n = std::max(arriveSize_, waitSize_); i < n; ++i) {
      int32_t v;
      std::memcpy(&v, inc + 32 * i, sizeof(v));
      *counter_at(area, i) += uint32_t(v);
    }
    opkit_emu::gm_flag_written(b);
    // CANN's counter write ends in SetAtomicNoneImpl (group_barrier_impl.h:148): a SetAtomicAdd the kernel left on
    // before Arrive / Wait is off after it, so a later DataCopy to GM overwrites
    c.atomic_dtype = -1;
  }
  GM_ADDR ws_;
  uint32_t arriveSize_, waitSize_;
  uint32_t counter_ = 1;    // the round
  bool hasArrive_ = false;  // Arrive called in this round
};

}  // namespace AscendC
