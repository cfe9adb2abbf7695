// EXTERN_IMPL_BUFPOOL: a user-defined TBufPool (A2: 支持). Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/
// 资源管理/自定义TBufPool/EXTERN_IMPL_BUFPOOL宏.md; macro include/basic_api/kernel_tpipe.h:382-451 (the non-3510 form);
// the handle calls it is used with: TQueBind::InitStartBufHandle / InitBufHandle (impl/basic_api/
// kernel_tquebind_impl.h:58-87), TBuf::InitStartBufHandle (kernel_tbuf_impl.h:203-214); TPipe::InitBufPool
// (kernel_tpipe_impl.h:409-455); example examples/01_simd_cpp_api/03_basic_api/04_memory_management/
// tbufpool_management/tbufpool_management.asc:31-71.
//  - TPipe::InitBufPool(pool, len) gives the pool len bytes (rounded up to 32) at the pipe's next free UB
//    address: GetCurAddr() starts there (an absolute UB offset), the pool's own InitBuffer hands out addresses
//    with SetCurAddr / SetCurBufSize;
//  - que.InitStartBufHandle(h, num, len) makes the queue's buffers the num handles from h on; InitBufHandle(pool,
//    index, h, addr, len) writes the handle it is given (CANN ignores index), so buffer k is the handle h + k;
//  - Reset() (and the destructor) ends the pool: cursor and length back to 0 (ResetPool), so it needs
//    InitBufPool again.
// Checked here: a handle past BUFID_SIZE (buffer-limit), a buffer outside the pool's range (ub-capacity) or not
// 32-byte aligned (ub-alignment), a queue buffer whose handle was never written (queue-protocol), a tensor still
// allocated at Reset (queue-protocol, as TBufPool::Reset), an L1 position (the cube side: a compile error).
#pragma once
#include "opkit_emu/tensor.h"

namespace AscendC {
class TPipeAllocator;
using TBufHandle = uint8_t*;  // asc-devkit impl/basic_api/kernel_tensor_base.h:29 (tpipe.h says it too)
}

namespace opkit_emu {

// What a TBufHandle of a user pool points at: one buffer's UB range.
struct ExtBufSlot {
  uint32_t addr = 0, len = 0;
  int pipe = 0;
  bool set = false;
};

// The pool's state (CANN: TBufPoolImpl<BUFID_SIZE> tBufPoolImpl, kernel_tpipe_base.h): the handles and the cursor,
// plus the range TPipe::InitBufPool gave it (base_, limit_, id_: the names TPipeAllocator reads on its own pools).
template <int N>
struct ExtPoolImpl {
  ExtBufSlot buf_[N > 0 ? N : 1];
  uint8_t curBufSize_ = 0;
  uint32_t startAddr_ = 0, maxAddr_ = 0, maxLen_ = 0;
  bool isReset_ = false;
  int id_ = -1;
  uint32_t base_ = 0, limit_ = 0;
  void attach_(int pipe, uint32_t off, uint32_t len) {
    id_ = pipe;
    base_ = startAddr_ = maxAddr_ = off;
    maxLen_ = len;
    limit_ = off + len;
  }
  void reset_() {  // ResetPool (kernel_tpipe.h:437-443)
    curBufSize_ = 0;
    startAddr_ = maxAddr_ = maxLen_ = 0;
    base_ = limit_ = 0;
  }
};

// The pool state of a TBufPool (the pool itself) or of a user pool (its tBufPoolImpl; the macro befriends this).
struct PoolAccess {
  template <class T, class = void>
  struct is_ext : std::false_type {};
  template <class T>
  struct is_ext<T, std::void_t<typename T::opkit_ext_pool_tag>> : std::true_type {};
  template <class T>
  static auto& get(T& p) {
    if constexpr (is_ext<T>::value) return p.tBufPoolImpl;
    else return p;
  }
};

// InitBufHandle: the buffer [addr, addr + len rounded to 32) must lie in the pool's range.
template <class Pool>
void ext_slot_init(Pool& pool, AscendC::TBufHandle h, uint32_t addr, uint32_t len, const char* call, SrcLoc loc) {
  auto& st = PoolAccess::get(pool);
  if (st.limit_ == 0) fail("queue-protocol", call, loc, "the pool was not given UB by InitBufPool (or was Reset)");
  if (len == 0) fail("ub-capacity", call, loc, "buffer length is 0 bytes (CANN asserts len > 0)");
  const uint64_t rounded = (uint64_t(len) + kBlk - 1) / kBlk * kBlk;
  if (addr % kBlk) fail("ub-alignment", call, loc, strf("UB address %u is not 32-byte aligned", addr));
  if (addr < st.base_ || addr + rounded > st.limit_)
    fail("ub-capacity", call, loc,
         strf("buffer [%u, %llu) is outside the pool's UB [%u, %u) that InitBufPool gave it", addr,
              (unsigned long long)(addr + rounded), st.base_, st.limit_));
  ExtBufSlot* s = reinterpret_cast<ExtBufSlot*>(h);
  *s = ExtBufSlot{addr, static_cast<uint32_t>(rounded), st.id_, true};
}

inline const ExtBufSlot& ext_slot(const ExtBufSlot* start, uint32_t k, uint32_t num, const char* call, SrcLoc loc) {
  const ExtBufSlot& s = start[k];
  if (!s.set)
    fail("queue-protocol", call, loc,
         strf("buffer %u of %u was never written by InitBufHandle: CANN's InitBufHandle fills the handle it is "
              "passed whatever its index, so buffer k needs the handle InitStartBufHandle's + k", k, num));
  return s;
}

// Reset: no tensor of the pool's range may still be allocated; its contents become undefined.
template <class Impl>
void ext_pool_reset(Impl& st, SrcLoc loc) {
  BlockCtx& c = ctx();
  if (st.limit_ != 0) {
    for (const BufRec& b : c.bufs) {
      if (b.pipe != st.id_ || b.off < st.base_ || b.off >= st.limit_) continue;
      if (b.state == BufState::Allocated || b.state == BufState::Queued || b.state == BufState::Dequeued)
        fail("queue-protocol", "Reset", loc,
             strf("a tensor of this pool (UB offset %u) is still allocated: free it before Reset", b.off));
    }
    if (c.checks) shadow_clear(st.base_, st.limit_ - st.base_);
  }
  st.reset_();
}

}  // namespace opkit_emu

// The A2 form of CANN's macro: the same public members; the state a friend of the emulator's TPipe can reach.
#define EXTERN_IMPL_BUFPOOL(EXT_BUFPOOL, POSITION, BUFID_SIZE)                                                     \
 public:                                                                                                            \
  static constexpr AscendC::TPosition poolPos = POSITION;                                                           \
  static constexpr int bufIDSize = BUFID_SIZE;                                                                      \
  static constexpr bool isTbufPool = true;                                                                          \
  using opkit_ext_pool_tag = void;                                                                                  \
  static_assert(POSITION == AscendC::TPosition::VECIN || POSITION == AscendC::TPosition::VECOUT ||                  \
                    POSITION == AscendC::TPosition::VECCALC,                                                        \
                "opkit emulator: EXTERN_IMPL_BUFPOOL pools UB only (VECIN/VECOUT/VECCALC); L1 (A1/B1/C1) is the "  \
                "cube side, not supported on the emulator");                                                       \
  ~EXT_BUFPOOL() { tBufPoolImpl.reset_(); }                                                                         \
  void Reset(OPKIT_LOC) { ::opkit_emu::ext_pool_reset(tBufPoolImpl, loc); }                                         \
  void Init() {                                                                                                     \
    tBufPoolImpl.reset_();                                                                                          \
    tBufPoolImpl.isReset_ = true;                                                                                   \
  }                                                                                                                 \
  AscendC::TBufHandle GetBufHandle(uint8_t offset, OPKIT_LOC) {                                                     \
    if (offset >= BUFID_SIZE)                                                                                       \
      ::opkit_emu::fail("buffer-limit", "GetBufHandle", loc,                                                        \
                        ::opkit_emu::strf("handle %u of a pool declared with BUFID_SIZE %d", unsigned(offset),      \
                                          int(BUFID_SIZE)));                                                        \
    return reinterpret_cast<AscendC::TBufHandle>(this->tBufPoolImpl.buf_ + offset);                                 \
  }                                                                                                                 \
  void SetCurAddr(uint32_t curAddr) { this->tBufPoolImpl.maxAddr_ = curAddr; }                                      \
  uint32_t GetCurAddr() { return this->tBufPoolImpl.maxAddr_; }                                                     \
  void SetCurBufSize(uint8_t curBufSize) { this->tBufPoolImpl.curBufSize_ = curBufSize; }                           \
  uint8_t GetCurBufSize() { return this->tBufPoolImpl.curBufSize_; }                                                \
                                                                                                                    \
 protected:                                                                                                         \
  ::opkit_emu::ExtPoolImpl<BUFID_SIZE> tBufPoolImpl;                                                                \
                                                                                                                    \
 private:                                                                                                           \
  friend struct ::opkit_emu::PoolAccess;                                                                            \
  friend class AscendC::TPipeAllocator
