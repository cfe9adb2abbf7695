// IBSet / IBWait: one block tells another, through a flag word in GM, that it may go on.
// Doc: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/同步控制/核间同步/IBSet.md, IBWait.md (A2: supported);
// declaration include/basic_api/kernel_operator_block_sync_intf.h:55-80. What CANN's implementation does
// (impl/basic_api/kernel_operator_block_sync_intf_impl.h:137-215, read, not copied): the flag is the 32-byte
// block gmWorkspace[blockNum * 8 * eventID + blockIdx * 8] (blockNum = GetBlockNum(), twice that when
// !isAIVOnly); IBSet spins until the flag's first int32 is 0 and writes 1, IBWait spins until it is 1 and writes
// 0, each reading the block into ubWorkspace and writing it back from there.
// Here: the same flag word and the same UB contents, the spin a wait on the launch's condition variable (the
// blocks run on their own host threads, as for SyncAll). Checked: gmWorkspace must hold the flag's 32 bytes and
// ubWorkspace 32 bytes (the pages' minimum sizes: tensor-bounds); a wait that no block left can release is the
// hang the NPU would show (sync-all).
#pragma once
#include <chrono>
#include "opkit_emu/gm_pad.h"
#include "opkit_emu/sync_all.h"
#include "opkit_emu/tensor.h"

namespace opkit_emu {

// Waits (lock held) until ready(); false when no block left can make it so: every block waits or ended and each
// waiter has seen the state since the last write (b.epoch), so none of them is about to go on.
template <class Ready>
inline bool gm_flag_wait(SyncAllBarrier& b, std::unique_lock<std::mutex>& lk, Ready ready) {
  int64_t seen = -1;
  b.flag_waiting++;
  bool ok = true;
  while (true) {
    if (seen != b.epoch) {
      seen = b.epoch;
      b.checked++;
    }
    if (ready()) break;
    if (b.failed) { ok = false; break; }
    if (b.flag_waiting + b.done + b.arrived >= b.num && b.checked >= b.flag_waiting) { ok = false; break; }
    // re-checked now and then too: a block arriving at a SyncAll changes the count without a notification
    b.cv.wait_for(lk, std::chrono::milliseconds(20));
  }
  b.flag_waiting--;
  if (seen == b.epoch) b.checked--;
  return ok;
}
// Why a flag word holds what it does, when it is an aclrtMalloc buffer's never-written garbage (gm_pad.h): the
// number alone (0x5A5A5A5A = 1515870810, the fill) does not say the program never cleared its workspace.
inline std::string never_written_note(const volatile int32_t* q) {
  if (!gm_data_unwritten(const_cast<const int32_t*>(q), sizeof(int32_t), nullptr)) return "";
  return "; that word was never written: aclrtMalloc memory nothing wrote (no aclrtMemset of the workspace, no "
         "host-to-device copy or kernel store) is garbage on the NPU, here the fill 0x5A5A5A5A";
}

// After a write that may release a waiter (lock held).
inline void gm_flag_written(SyncAllBarrier& b) {
  b.epoch++;
  b.checked = 0;
  b.cv.notify_all();
}

inline void ib_flag(const AscendC::GlobalTensor<int32_t>& gm, const AscendC::LocalTensor<int32_t>& ub,
                    int32_t blockIdx, int32_t eventID, bool isAIVOnly, bool set, SrcLoc loc) {
  const char* call = set ? "IBSet" : "IBWait";
  BlockCtx& c = ctx();
  const int64_t blockNum = isAIVOnly ? c.num : 2 * c.num;
  if (blockIdx < 0 || eventID < 0)
    fail("api-argument", call, loc, strf("blockIdx %d and eventID %d must not be negative", blockIdx, eventID));
  const uint64_t at = uint64_t(blockNum) * 8 * uint64_t(eventID) + uint64_t(blockIdx) * 8;
  if (at + 8 > gm.GetSize())
    fail("tensor-bounds", call, loc,
         strf("gmWorkspace holds %llu int32_t; the flag of blockIdx %d, eventID %d is at [%llu, %llu) "
              "(the page: at least blockNum * 32 B * eventID_max + blockIdx_max * 32 B + 32 B)",
              (unsigned long long)gm.GetSize(), blockIdx, eventID, (unsigned long long)at,
              (unsigned long long)(at + 8)));
  if (ub.GetSize() < 8)
    fail("tensor-bounds", call, loc, strf("ubWorkspace holds %u int32_t; the page asks for 32 bytes", ub.GetSize()));
  volatile int32_t* flag = reinterpret_cast<volatile int32_t*>(gm.GetPhyAddr(at));
  const int32_t want = set ? 0 : 1;
  SyncAllBarrier& b = barrier_of(c);
  std::unique_lock<std::mutex> lk(b.mu);
  // the waiter this releases sees the setter's atomic writes (sync_all.h); before the spin, as CANN's IBSet runs
  // pipe_barrier(PIPE_ALL) before its while loop (kernel_operator_block_sync_intf_impl.h, IBSet)
  if (set) apply_own_atomics(c);
  gm_flag_wait(b, lk, [&] { return *flag == want; });
  if (*flag != want) {
    if (b.failed) throw SyncAllAborted();
    fail("sync-all", call, loc,
         strf("the flag of blockIdx %d, eventID %d stays %d: this block waits for %d and no block left can write it "
              "(the NPU would hang)%s", blockIdx, eventID, int(*flag), want, never_written_note(flag).c_str()));
  }
  for (uint32_t i = 0; i < 8; ++i) ub.SetValue(i, i == 0 ? 1 - want : flag[i], loc);
  *flag = 1 - want;
  gm_flag_written(b);
}

// InitDetermineComputeWorkspace / WaitPreBlock / NotifyNextBlock: blocks in ascending blockIdx order, round after
// round (同步控制/核间同步/InitDetermineComputeWorkspace.md, WaitPreBlock.md, NotifyNextBlock.md; A2 supported).
// CANN's implementation (impl/basic_api/dav_c220/kernel_operator_determine_compute_sync_impl.h:28-100, read, not
// copied): gmWorkspace holds one 32-byte block per block of the launch, ubWorkspace the same plus the block's round
// k at [blockNum * 8] (1 after Init). Init: block 0 zeroes gmWorkspace. WaitPreBlock: reads gmWorkspace into
// ubWorkspace until the blocks before this one hold k and the rest 0. NotifyNextBlock: the last block zeroes
// gmWorkspace, any other writes k into its own block; k goes up by one. Checked: the pages' minimum sizes
// (gmWorkspace GetBlockNum() * 32 B, ubWorkspace GetBlockNum() * 32 + 32 B: tensor-bounds); a wait that no block
// left can release is sync-all.
inline void determine_sizes(const AscendC::GlobalTensor<int32_t>& gm, const AscendC::LocalTensor<int32_t>& ub,
                            const char* call, SrcLoc loc) {
  const uint64_t n = uint64_t(ctx().num) * 8;
  // The page asks for the memory, not a size: a GlobalTensor set without one (SetGlobalBuffer(ptr), GetSize() 0,
  // as CANN's own sequential_block_sync sample writes it) holds what its GM buffer holds from its address on.
  uint64_t have = gm.GetSize();
  if (have == 0) {
    const auto* p = reinterpret_cast<const uint8_t*>(gm.GetPhyAddr());
    if (const GmRegion* r = gm_find(p)) have = (r->base + r->bytes - p) / sizeof(int32_t);
  }
  if (have < n)
    fail("tensor-bounds", call, loc, strf("gmWorkspace holds %llu int32_t; the page asks for GetBlockNum() * 32 bytes "
                                          "(%llu int32_t)", (unsigned long long)have, (unsigned long long)n));
  if (ub.GetSize() < n + 8)
    fail("tensor-bounds", call, loc, strf("ubWorkspace holds %u int32_t; the page asks for GetBlockNum() * 32 + 32 "
                                          "bytes (%llu int32_t)", ub.GetSize(), (unsigned long long)(n + 8)));
}
inline void determine_init(const AscendC::GlobalTensor<int32_t>& gm, const AscendC::LocalTensor<int32_t>& ub,
                           SrcLoc loc) {
  const char* call = "InitDetermineComputeWorkspace";
  determine_sizes(gm, ub, call, loc);
  BlockCtx& c = ctx();
  const uint32_t n = static_cast<uint32_t>(c.num) * 8;
  if (c.idx == 0) {
    SyncAllBarrier& b = barrier_of(c);
    std::lock_guard<std::mutex> lk(b.mu);
    for (uint32_t i = 0; i < n; ++i) {
      ub.SetValue(i, 0, loc);
      gm.GetPhyAddr()[i] = 0;
    }
    gm_flag_written(b);
  }
  ub.SetValue(n, 1, loc);
}
inline void determine_wait(const AscendC::GlobalTensor<int32_t>& gm, const AscendC::LocalTensor<int32_t>& ub,
                           SrcLoc loc) {
  const char* call = "WaitPreBlock";
  determine_sizes(gm, ub, call, loc);
  BlockCtx& c = ctx();
  const uint32_t n = static_cast<uint32_t>(c.num) * 8, me = static_cast<uint32_t>(c.idx) * 8;
  const int32_t k = ub.GetValue(n, loc);
  volatile int32_t* g = gm.GetPhyAddr();
  auto ready = [&] {
    for (uint32_t o = 0; o < n; o += 8)
      if (g[o] != (o < me ? k : 0)) return false;
    return true;
  };
  SyncAllBarrier& b = barrier_of(c);
  std::unique_lock<std::mutex> lk(b.mu);
  gm_flag_wait(b, lk, ready);
  if (!ready()) {
    if (b.failed) throw SyncAllAborted();
    fail("sync-all", call, loc,
         strf("block %lld waits for round %d of the blocks before it and no block left can notify it (the NPU would "
              "hang)", (long long)c.idx, k));
  }
  for (uint32_t i = 0; i < n; ++i) ub.SetValue(i, g[i], loc);
}
inline void determine_notify(const AscendC::GlobalTensor<int32_t>& gm, const AscendC::LocalTensor<int32_t>& ub,
                             SrcLoc loc) {
  const char* call = "NotifyNextBlock";
  determine_sizes(gm, ub, call, loc);
  BlockCtx& c = ctx();
  const uint32_t n = static_cast<uint32_t>(c.num) * 8, me = static_cast<uint32_t>(c.idx) * 8;
  const int32_t k = ub.GetValue(n, loc);
  {
    SyncAllBarrier& b = barrier_of(c);
    std::lock_guard<std::mutex> lk(b.mu);
    const bool last = c.idx + 1 == c.num;
    apply_own_atomics(c);  // the next block sees this one's atomic writes (sync_all.h)
    for (uint32_t i = last ? 0 : me; i < (last ? n : me + 8); ++i) {
      ub.SetValue(i, last ? 0 : k, loc);
      gm.GetPhyAddr()[i] = last ? 0 : k;
    }
    gm_flag_written(b);
  }
  ub.SetValue(n, k + 1, loc);
}

}  // namespace opkit_emu

namespace AscendC {

// A template only so that the thread-per-block launch is asked for by a kernel that calls it (sync_all.h). Each
// call orders every pipe of the block before and after it: CANN's A2 implementation opens and closes each with
// PipeBarrier<PIPE_ALL>() (impl/basic_api/dav_c220/kernel_operator_determine_compute_sync_impl.h:31/43, 69/84,
// 91/114), which CANN's sequential_block_sync sample relies on between its MTE2 load and MTE3 store.
template <class T>
inline void InitDetermineComputeWorkspace(GlobalTensor<T>& gmWorkspace, LocalTensor<T>& ubWorkspace, OPKIT_LOC) {
  static_assert(std::is_same<T, int32_t>::value, "InitDetermineComputeWorkspace: gmWorkspace and ubWorkspace are int32_t");
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 2100 + sizeof(T)>>::registered;
  opkit_emu::ctx().hz.barrier_all();  // CANN's A2 code begins and ends with PipeBarrier<PIPE_ALL> (above)
  opkit_emu::determine_init(gmWorkspace, ubWorkspace, loc);
  opkit_emu::ctx().hz.barrier_all();
}
template <class T>
inline void WaitPreBlock(GlobalTensor<T>& gmWorkspace, LocalTensor<T>& ubWorkspace, OPKIT_LOC) {
  static_assert(std::is_same<T, int32_t>::value, "WaitPreBlock: gmWorkspace and ubWorkspace are int32_t");
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 2100 + sizeof(T)>>::registered;
  opkit_emu::ctx().hz.barrier_all();  // CANN's A2 code begins and ends with PipeBarrier<PIPE_ALL> (above)
  opkit_emu::determine_wait(gmWorkspace, ubWorkspace, loc);
  opkit_emu::ctx().hz.barrier_all();
}
template <class T>
inline void NotifyNextBlock(GlobalTensor<T>& gmWorkspace, LocalTensor<T>& ubWorkspace, OPKIT_LOC) {
  static_assert(std::is_same<T, int32_t>::value, "NotifyNextBlock: gmWorkspace and ubWorkspace are int32_t");
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 2100 + sizeof(T)>>::registered;
  opkit_emu::ctx().hz.barrier_all();  // CANN's A2 code begins and ends with PipeBarrier<PIPE_ALL> (above)
  opkit_emu::determine_notify(gmWorkspace, ubWorkspace, loc);
  opkit_emu::ctx().hz.barrier_all();
}

template <bool isAIVOnly = true>
inline void IBSet(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx,
                  int32_t eventID, OPKIT_LOC) {
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 2000 + isAIVOnly>>::registered;
  opkit_emu::ib_flag(gmWorkspace, ubWorkspace, blockIdx, eventID, isAIVOnly, true, loc);
}
template <bool isAIVOnly = true>
inline void IBWait(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx,
                   int32_t eventID, OPKIT_LOC) {
  (void)opkit_emu::SyncAllUser<std::integral_constant<int, 2000 + isAIVOnly>>::registered;
  opkit_emu::ib_flag(gmWorkspace, ubWorkspace, blockIdx, eventID, isAIVOnly, false, loc);
}

}  // namespace AscendC
