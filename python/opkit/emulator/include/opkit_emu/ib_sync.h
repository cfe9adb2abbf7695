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
#include "opkit_emu/sync_all.h"
#include "opkit_emu/tensor.h"

namespace opkit_emu {

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
  b.flag_waiting++;
  b.cv.wait(lk, [&] { return *flag == want || b.failed || b.flag_waiting + b.done + b.arrived >= b.num; });
  b.flag_waiting--;
  if (*flag != want) {
    if (b.failed) throw SyncAllAborted();
    fail("sync-all", call, loc,
         strf("the flag of blockIdx %d, eventID %d stays %d: this block waits for %d and no block left can write it "
              "(the NPU would hang)", blockIdx, eventID, int(*flag), want));
  }
  for (uint32_t i = 0; i < 8; ++i) ub.SetValue(i, i == 0 ? 1 - want : flag[i], loc);
  *flag = 1 - want;
  b.cv.notify_all();
}

}  // namespace opkit_emu

namespace AscendC {

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
