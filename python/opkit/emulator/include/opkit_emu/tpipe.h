// TPipe, TQue, TQueBind, TBuf: UB allocation and the queue protocol. Facts sheet §1 "TPipe", "TQue and TBuf".
#pragma once

#include <algorithm>
#include <iterator>

#include "opkit_emu/ext_bufpool.h"  // EXTERN_IMPL_BUFPOOL and the buffer handles it hands out
#include "opkit_emu/tensor.h"

namespace AscendC {

using TEventID = int8_t;
using TBufHandle = uint8_t*;  // asc-devkit impl/basic_api/kernel_tensor_base.h:29
enum class HardEvent : uint8_t {
  MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
  MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S,
  MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};

}  // namespace AscendC

namespace opkit_emu {

inline constexpr uint32_t kMaxBuffersPerPipe = 64;     // facts §1: at most 64 buffers per TPipe
inline constexpr uint32_t kMaxQueBuffersPerPos = 8;    // facts §1: 8 TQue buffers per TPosition on A2

// Past the usable size the buffers overlap UB the compiler reserves by default (A2: 8 KB that Select and
// other APIs use internally). CANN accepts it; the device build needs the reservation turned off, so
// this is a warning naming the flag (once per call site and process), not a failure.
OPKIT_EMU_RT void warn_reserved(uint64_t end, const char* call, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void warn_reserved(uint64_t end, const char* call, SrcLoc loc) {
  if (kIs310P)
    warn_once("ub-capacity", call, loc,
              strf("UB use reaches %llu bytes, above CANN's TOTAL_VEC_LOCAL_SIZE for ascend310p (%u bytes); CANN's "
                   "CPU-debug mode accepts up to %u bytes, check that the device build does",
                   (unsigned long long)end, kChip.ub_usable_bytes, kChip.ub_total_bytes));
  else
    warn_once("ub-capacity", call, loc,
              strf("UB use reaches %llu bytes, above the %u bytes left when the compiler keeps its default 8 KB UB "
                   "reservation; on the device this kernel needs --cce-disable-asc-reserved-ubuf, which makes APIs "
                   "that use the reservation (Select and others) a compile error",
                   (unsigned long long)end, kChip.ub_usable_bytes));
}
#endif

class TPipeBase {
 public:
  int id_ = -1;
  uint32_t used_ = 0;  // bump pointer (bytes)
  uint32_t nbufs_ = 0;
  uint32_t base_ = 0, limit_ = 0;  // a TBufPool: its UB range [base_, limit_); a TPipe: limit_ 0 (the UB)
  bool is_pool_ = false;
  uint8_t next_event_[64] = {};
  std::vector<uint32_t>* own_bufs_ = nullptr;  // a TPipe copy: the buffer ids planned through it (carve adds them)

  // Hands out a 32-byte rounded UB range; enforces the chip's usable UB capacity.
  uint32_t carve(uint32_t len, uint32_t num, const char* call, SrcLoc loc);
};
#if OPKIT_EMU_RT_DEFS  // TPipeBase members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT uint32_t TPipeBase::carve(uint32_t len, uint32_t num, const char* call, SrcLoc loc) {
  BlockCtx& c = ctx();
  if (len == 0) c.fail("ub-capacity", call, loc, "buffer length is 0 bytes");
  if (nbufs_ + num > kMaxBuffersPerPipe)
    c.fail("buffer-limit", call, loc,
           strf("%u buffers requested, %u already in this TPipe: at most %u are allowed", num, nbufs_,
                kMaxBuffersPerPipe));
  uint64_t rounded = (static_cast<uint64_t>(len) + kBlk - 1) / kBlk * kBlk;
  uint64_t end = used_ + rounded * num;
  // The limit is CANN's own: its CPU-debug TPipe asserts the UB pool end <= bufferInitLen(UB), the
  // whole UB (asc-devkit impl/basic_api/kernel_tpipe_impl.h, utils/kernel_utils_mode_cpu.h).
  if (end > kChip.ub_total_bytes)
    c.fail("ub-capacity", call, loc,
           strf("InitBuffer of %u x %llu bytes brings UB use to %llu bytes; %s allows %u bytes per core "
                "(the whole UB, as CANN's TPipe checks)",
                num, (unsigned long long)rounded, (unsigned long long)end, kChip.profile, kChip.ub_total_bytes));
  if (limit_ && end > limit_)
    c.fail("ub-capacity", call, loc,
           strf("InitBuffer of %u x %llu bytes ends at UB offset %llu, past the TBufPool's %u bytes at %u", num,
                (unsigned long long)rounded, (unsigned long long)end, limit_ - base_, base_));
  if (end > kChip.ub_usable_bytes && used_ <= kChip.ub_usable_bytes) warn_reserved(end, call, loc);
  uint32_t off = used_;
  used_ = static_cast<uint32_t>(end);
  nbufs_ += num;
  if (own_bufs_)  // the callers create the buffers next, ids from c.bufs.size() on
    for (uint32_t i = 0; i < num; ++i) own_bufs_->push_back(static_cast<uint32_t>(c.bufs.size()) + i);
  if (used_ > c.stats.ub_high_water) c.stats.ub_high_water = used_;
  return off;
}
#endif

OPKIT_EMU_RT uint32_t new_buf(uint32_t off, uint32_t len, BufKind kind, int queue, int pipe);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT uint32_t new_buf(uint32_t off, uint32_t len, BufKind kind, int queue, int pipe) {
  BlockCtx& c = ctx();
  BufRec& b = c.bufs.emplace_back();  // filled in place: a record built on the stack and copied stalled the copy
  b.off = off;
  b.len = len;
  b.kind = kind;
  b.queue = queue;
  b.pipe = pipe;
  b.state = kind == BufKind::TBuf ? BufState::Fixed : BufState::Free;
  if (c.checks) {
    shadow_clear(off, len);
    c.hz.forget(off, off + len);
  }
  // Fresh UB holds garbage: NaN patterns for every float type. A fast launch leaves what the worker's UB held
  // (the checked launch proved no output depends on it) or, for the harness's proof of that, another pattern.
  if (c.ub_fill >= 0) std::memset(c.ub + off, c.ub_fill, len);
  return static_cast<uint32_t>(c.bufs.size() - 1);
}
#endif

// A tensor on bytes [rel_off, rel_off + bytes) of buffer `buf`, in the block context c (a caller that already holds
// it saves the thread-local look-up: a queue's AllocTensor / DeQue, once a call).
template <class T>
AscendC::LocalTensor<T> make_tensor(BlockCtx& c, uint32_t buf, uint32_t rel_off, uint32_t bytes) {
  AscendC::LocalTensor<T> t;
  t.m_.addr = c.ub + c.bufs[buf].off + rel_off;
  t.m_.bytes = bytes;
  t.m_.buf = static_cast<int32_t>(buf);
  t.m_.gen = c.bufs[buf].gen;
  return t;
}
template <class T>
AscendC::LocalTensor<T> make_tensor(uint32_t buf, uint32_t rel_off, uint32_t bytes) {
  return make_tensor<T>(ctx(), buf, rel_off, bytes);
}

}  // namespace opkit_emu

namespace opkit_emu {
// The pipes a queue's event orders (CANN GetQueEvt, asc-devkit 82b89a15 impl/basic_api/kernel_event.h:540-584):
// GM->UB MTE2_V, UB->GM V_MTE3, UB->UB MTE2_MTE3; -1: no event.
inline void queue_event_pipes(AscendC::TPosition s, AscendC::TPosition d, int8_t& producer, int8_t& consumer) {
  using AscendC::TPosition;
  auto ub = [](TPosition p) { return p == TPosition::VECIN || p == TPosition::VECOUT || p == TPosition::VECCALC; };
  using P = Pipe;
  producer = consumer = -1;
  if (s == TPosition::GM && ub(d)) { producer = int8_t(P::MTE2); consumer = int8_t(P::V); }
  else if (ub(s) && d == TPosition::GM) { producer = int8_t(P::V); consumer = int8_t(P::MTE3); }
  else if (ub(s) && ub(d) && !(s == TPosition::VECCALC && d == TPosition::VECCALC)) {
    producer = int8_t(P::MTE2);
    consumer = int8_t(P::MTE3);
  }
}
template <AscendC::TPosition p>
inline constexpr bool user_que_pos = p == AscendC::TPosition::GM || p == AscendC::TPosition::VECIN ||
                                     p == AscendC::TPosition::VECOUT || p == AscendC::TPosition::VECCALC;
}  // namespace opkit_emu

namespace AscendC {

// TQue's third parameter may be a `const TQueConfig*` (asc-devkit 82b89a15 impl/basic_api/utils/
// kernel_utils_ceil_oom_que.h:211-239, docs .../资源管理/TQue/TQue简介.md): ND/NZ conversion (A1/B1/CO2 only, cube
// positions), bufferLen / bufferNumber as compile-time hints equal to InitBuffer's (0: decided at InitBuffer), the
// rest reserved. The emulator plans buffers at InitBuffer either way; a vector queue asking for ND/NZ conversion is
// a compile error.
struct TQueConfig {
  bool nd2nz = false;
  bool nz2nd = false;
  bool scmBlockGroup = false;
  uint32_t bufferLen = 0;
  uint32_t bufferNumber = 0;
  uint32_t consumerSize = 0;
  TPosition consumer[8] = {};
  bool enableStaticEvtId = false;
  bool enableLoopQueue = false;
};
constexpr TQueConfig GetTQueConfig(bool nd2nzIn, bool nz2ndIn, bool scmBlockGroupIn, uint32_t bufferLenIn,
                                   uint32_t bufferNumberIn, uint32_t consumerSizeIn, const TPosition consumerIn[],
                                   bool enableStaticEvtIdIn, bool enableLoopQueueIn) {
  return {nd2nzIn, nz2ndIn, scmBlockGroupIn, bufferLenIn, bufferNumberIn, consumerSizeIn,
          {consumerIn[0], consumerIn[1], consumerIn[2], consumerIn[3], consumerIn[4], consumerIn[5], consumerIn[6],
           consumerIn[7]},
          enableStaticEvtIdIn, enableLoopQueueIn};
}

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue;
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind;
template <TPosition pos = TPosition::VECCALC>
class TBuf;

}  // namespace AscendC

namespace opkit_emu {
// The producer / consumer pipe argument of QueCore::enque_buf / deque_buf that means "the queue's own event", taken
// from the queue record the call looks up anyway (EnQue / DeQue looked the queue up a second time for it). A
// sentinel beside a pipe (>= 0) and -1 (no event: queue_event_pipes' answer for positions with none between them),
// neither of which it can be.
inline constexpr int8_t kQueueEvent = -2;

// The queue protocol's bookkeeping behind TQue / TQueBind (AscendC::TQueImpl below): the same for every element
// type, position and depth, so it is one non-template base compiled once in the runtime object (OPKIT_EMU_RT,
// config.h) instead of again for each TQue<pos, depth> and each T a kernel uses; the templates only make the tensor.
// The queue state lives in the block context, so a queue object that goes out of scope cannot hide tensors that are
// still allocated.
class QueCore {
 public:
  int qid_ = -1;
  ExtBufSlot* ext_start_ = nullptr;
  uint8_t ext_num_ = 0;

 protected:
  // The queue's record (planned from a user pool's handles at first use); fails if it has none or its TPipe died.
  QueueRec& queue(BlockCtx& c, AscendC::TPosition pos, int32_t depth, const char* call, SrcLoc loc);
  // AllocTensor: the next free buffer's id, allocated and poisoned.
  uint32_t alloc_buf(AscendC::TPosition pos, int32_t depth, SrcLoc loc);
  // EnQue of the tensor m, on the producer pipe's event (kQueueEvent: the queue's own, taken from the record this
  // call looks up anyway; or the user positions' pair user_evt).
  bool enque_buf(AscendC::TPosition pos, int32_t depth, const TensorMeta& m, int8_t producer, int user_evt, SrcLoc loc);
  // DeQue: the oldest queued buffer's id, after the consumer pipe's wait (kQueueEvent: the queue's own).
  uint32_t deque_buf(AscendC::TPosition pos, int32_t depth, int8_t consumer, int user_evt, SrcLoc loc);
  void free_buf(AscendC::TPosition pos, int32_t depth, const TensorMeta& m, SrcLoc loc);
  bool vacant(int32_t depth) const;

 private:
  void plan_ext(BlockCtx& c, AscendC::TPosition pos, int32_t depth, const char* call, SrcLoc loc);
};
#if OPKIT_EMU_RT_DEFS  // QueCore members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT void QueCore::plan_ext(BlockCtx& c, AscendC::TPosition pos, int32_t depth, const char* call, SrcLoc loc) {
  using AscendC::TPosition;
  QueueRec q;
  q.pos = static_cast<int>(pos);
  q.depth = depth;
  q.num = ext_num_;
  q.init_loc = loc;
  queue_event_pipes(pos == TPosition::VECIN ? TPosition::GM : pos, pos == TPosition::VECOUT ? TPosition::GM : pos,
                    q.producer, q.consumer);
  const int qid = static_cast<int>(c.queues.size());
  q.first_buf = static_cast<uint32_t>(c.bufs.size());
  for (uint32_t k = 0; k < ext_num_; ++k) ext_slot(ext_start_, k, ext_num_, call, loc);
  for (uint32_t k = 0; k < ext_num_; ++k)
    new_buf(ext_start_[k].addr, ext_start_[k].len, BufKind::Queue, qid, ext_start_[k].pipe);
  push_queue(c, std::move(q));
  qid_ = qid;
}
OPKIT_EMU_RT QueueRec& QueCore::queue(BlockCtx& c, AscendC::TPosition pos, int32_t depth, const char* call,
                                      SrcLoc loc) {
  if (qid_ < 0 && ext_start_) plan_ext(c, pos, depth, call, loc);
  if (qid_ < 0 || static_cast<size_t>(qid_) >= c.queues.size())
    c.fail("queue-protocol", call, loc, "queue used before TPipe::InitBuffer");
  QueueRec& q = c.queues[qid_];
  if (c.bufs[q.first_buf].pipe != c.live_pipe)
    c.fail("queue-protocol", call, loc, "queue belongs to a TPipe that was destroyed");
  return q;
}
OPKIT_EMU_RT uint32_t QueCore::alloc_buf(AscendC::TPosition pos, int32_t depth, SrcLoc loc) {
  BlockCtx& c = ctx();
  QueueRec& q = queue(c, pos, depth, "TQue::AllocTensor", loc);
  for (uint32_t k = 0; k < q.num; ++k) {
    uint32_t id = q.first_buf + (q.next + k) % q.num;
    BufRec& b = c.bufs[id];
    if (b.state != BufState::Free) continue;
    q.next = (q.next + k + 1) % q.num;
    b.state = BufState::Allocated;
    b.gen++;
    b.alloc_loc = loc;
    if (c.checks) shadow_clear(b.off, b.len);  // fresh tensors hold stale data: poison it
    // CANN's AllocTensor waits the event the buffer's last FreeTensor set (e.g. V_MTE2 for VECIN).
    if (q.producer >= 0) c.hz.wait(q.producer, b.free_snap);
    return id;
  }
  c.fail("queue-protocol", "TQue::AllocTensor", loc,
         strf("all %u buffers of this queue are already allocated and not freed (the NPU would wait forever); "
              "FreeTensor one first or InitBuffer more buffers",
              q.num));
}
OPKIT_EMU_RT bool QueCore::enque_buf(AscendC::TPosition pos, int32_t depth, const TensorMeta& m, int8_t producer,
                                     int user_evt, SrcLoc loc) {
  BlockCtx& c = ctx();
  QueueRec& q = queue(c, pos, depth, "TQue::EnQue", loc);
  if (producer == kQueueEvent) producer = q.producer;
  m.check_live(c, "TQue::EnQue", loc, "tensor");
  BufRec& b = c.bufs[m.buf];
  if (b.queue != qid_) c.fail("queue-protocol", "TQue::EnQue", loc, "the tensor was not allocated from this queue");
  if (b.state == BufState::Queued)
    c.fail("queue-protocol", "TQue::EnQue", loc, "the tensor is already in the queue (EnQue twice)");
  if (depth > 0 && q.fifo.size() >= static_cast<size_t>(depth))
    c.fail("queue-protocol", "TQue::EnQue", loc,
           strf("queue depth is %d and %zu tensors are already queued; DeQue first", depth, q.fifo.size()));
  b.state = BufState::Queued;
  b.user_evt = user_evt;
  if (producer >= 0) c.hz.snapshot_into(producer, b.enque_snap);  // SetFlag of the queue's event
  q.fifo.push_back(static_cast<uint32_t>(m.buf));
  return true;
}
OPKIT_EMU_RT uint32_t QueCore::deque_buf(AscendC::TPosition pos, int32_t depth, int8_t consumer, int user_evt,
                                         SrcLoc loc) {
  BlockCtx& c = ctx();
  QueueRec& q = queue(c, pos, depth, "TQue::DeQue", loc);
  if (consumer == kQueueEvent) consumer = q.consumer;
  if (q.fifo.empty())
    c.fail("queue-protocol", "TQue::DeQue", loc, "DeQue of an empty queue (the NPU would wait forever)");
  uint32_t id = q.fifo.front();
  q.fifo.erase(q.fifo.begin());
  BufRec& b = c.bufs[id];
  b.state = BufState::Dequeued;
  if (user_evt >= 0 && b.user_evt >= 0 && user_evt != b.user_evt)
    c.fail("queue-protocol", "TQue::DeQue", loc,
           "DeQue<srcUserPos, dstUserPos> names another position pair than the EnQue of this tensor (CANN's "
           "CPU debug build asserts \"EnQue and DeQue Event should be same\")");
  if (consumer >= 0) c.hz.wait(consumer, b.enque_snap);  // WaitFlag of the queue's event
  return id;
}
OPKIT_EMU_RT void QueCore::free_buf(AscendC::TPosition pos, int32_t depth, const TensorMeta& m, SrcLoc loc) {
  BlockCtx& c = ctx();
  QueueRec& q = queue(c, pos, depth, "TQue::FreeTensor", loc);
  if (m.buf < 0 || static_cast<size_t>(m.buf) >= c.bufs.size())
    c.fail("queue-protocol", "TQue::FreeTensor", loc, "the tensor was never allocated");
  BufRec& b = c.bufs[m.buf];
  if (b.queue != qid_)
    c.fail("queue-protocol", "TQue::FreeTensor", loc, "the tensor was not allocated from this queue");
  if (b.gen != m.gen || b.state == BufState::Free)
    c.fail("queue-protocol", "TQue::FreeTensor", loc, "double free: the tensor was already freed");
  if (b.state == BufState::Queued)
    c.fail("queue-protocol", "TQue::FreeTensor", loc, "the tensor is still in the queue (EnQue without DeQue)");
  b.state = BufState::Free;
  b.gen++;
  if (q.consumer >= 0) c.hz.snapshot_into(q.consumer, b.free_snap);  // SetFlag of the reverse event
}
OPKIT_EMU_RT bool QueCore::vacant(int32_t depth) const {
  const BlockCtx& c = ctx();
  return qid_ >= 0 && (depth <= 0 || c.queues[qid_].fifo.size() < static_cast<size_t>(depth));
}
#endif
}  // namespace opkit_emu

namespace AscendC {

// Shared implementation of TQue / TQueBind: the tensor of the element type asked for; the rest is QueCore's.
template <TPosition pos, int32_t depth>
class TQueImpl : public opkit_emu::QueCore {
 public:
  template <class T>
  LocalTensor<T> AllocTensor(OPKIT_LOC) {
    return tensor<T>(alloc_buf(pos, depth, loc));
  }
  template <class T>
  bool EnQue(const LocalTensor<T>& t, OPKIT_LOC) {
    return enque_buf(pos, depth, t.m_, opkit_emu::kQueueEvent, -1, loc);
  }
  // The user-position forms (kernel_tpipe.h:74-82; impl/basic_api/kernel_tquebind_impl.h:162-215,355-470): the
  // event is the one between srcUserPos and dstUserPos instead of the queue's own, and CANN's CPU debug build
  // asserts that DeQue names the same pair as EnQue (queue-protocol here).
  template <TPosition srcUserPos, TPosition dstUserPos, class T>
  bool EnQue(const LocalTensor<T>& t, OPKIT_LOC) {
    static_assert(depth != 0, "can not enque tbuf with user pos while tque's depth is zero");
    static_assert(opkit_emu::user_que_pos<srcUserPos> && opkit_emu::user_que_pos<dstUserPos>,
                  "EnQue only supports the positions GM / VECIN / VECOUT / VECCALC");
    static_assert(!(srcUserPos == TPosition::GM && dstUserPos == TPosition::GM),
                  "EnQue src and dst position cannot be GM at the same time");
    int8_t prod, cons;
    opkit_emu::queue_event_pipes(srcUserPos, dstUserPos, prod, cons);
    return enque_buf(pos, depth, t.m_, prod, static_cast<int>(srcUserPos) * 256 + static_cast<int>(dstUserPos), loc);
  }
  template <TPosition srcUserPos, TPosition dstUserPos, class T>
  LocalTensor<T> DeQue(OPKIT_LOC) {
    static_assert(depth != 0, "must use DeQue<LocalTensor&> api while tque's depth is zero");
    static_assert(opkit_emu::user_que_pos<srcUserPos> && opkit_emu::user_que_pos<dstUserPos>,
                  "DeQue only supports the positions GM / VECIN / VECOUT / VECCALC");
    static_assert(!(srcUserPos == TPosition::GM && dstUserPos == TPosition::GM),
                  "DeQue src and dst position cannot be GM at the same time");
    int8_t prod, cons;
    opkit_emu::queue_event_pipes(srcUserPos, dstUserPos, prod, cons);
    return deque<T>(cons, static_cast<int>(srcUserPos) * 256 + static_cast<int>(dstUserPos), loc);
  }

 private:
  template <class T>
  LocalTensor<T> deque(int8_t consumer, int user_evt, opkit_emu::SrcLoc loc) {
    return tensor<T>(deque_buf(pos, depth, consumer, user_evt, loc));
  }
  template <class T>
  static LocalTensor<T> tensor(uint32_t id) {
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    auto t = opkit_emu::make_tensor<T>(c, id, 0, c.bufs[id].len);
    t.m_.pos = pos;
    return t;
  }

 public:
  template <class T>
  LocalTensor<T> DeQue(OPKIT_LOC) {
    return deque<T>(opkit_emu::kQueueEvent, -1, loc);
  }
  // The untyped form (asc-devkit include/basic_api/kernel_tpipe.h:80): the same dequeue and wait, the buffer's
  // address as TBufHandle (impl/basic_api/kernel_tensor_base.h:29, uint8_t*); kernels call it for the wait alone.
  TBufHandle DeQue(OPKIT_LOC) {
    return deque<uint8_t>(opkit_emu::kQueueEvent, -1, loc).data();
  }
  template <class T>
  void FreeTensor(LocalTensor<T>& t, OPKIT_LOC) {
    free_buf(pos, depth, t.m_, loc);
  }
  template <class T>
  void FreeTensor(LocalTensor<T>&& t, OPKIT_LOC) { LocalTensor<T> x = t; FreeTensor(x, loc); }
  // Output-parameter forms (kernel_tpipe.h: AllocTensor(LocalTensor<T>&), DeQue(LocalTensor<T>&)).
  template <class T>
  void AllocTensor(LocalTensor<T>& t, OPKIT_LOC) { t = AllocTensor<T>(loc); }
  template <class T>
  void DeQue(LocalTensor<T>& t, OPKIT_LOC) { t = DeQue<T>(loc); }
  bool VacantInQue() const { return vacant(depth); }
  // Releases the queue's hardware events (kernel_tpipe.h:86): the emulator's queue events are not allocated
  // from a pool, so there is nothing to release; the call stays legal anywhere, as on the NPU.
  void FreeAllEvent() {}
  bool HasTensorInQue() const { return qid_ >= 0 && !opkit_emu::ctx().queues[qid_].fifo.empty(); }
  int32_t GetTensorCountInQue() const { return qid_ >= 0 ? static_cast<int32_t>(opkit_emu::ctx().queues[qid_].fifo.size()) : 0; }

  // A user pool's buffers (EXTERN_IMPL_BUFPOOL, ext_bufpool.h; CANN impl/basic_api/kernel_tquebind_impl.h:58-87):
  // the queue's num buffers are the handles from startBufhandle on, each written by InitBufHandle; the queue is
  // planned from them at its first use.
  void InitStartBufHandle(TBufHandle startBufhandle, uint8_t num, uint32_t len, OPKIT_LOC) {
    (void)len;
    if (num == 0) opkit_emu::fail("queue-protocol", "TQue::InitStartBufHandle", loc, "num (buffer count) is 0");
    ext_start_ = reinterpret_cast<opkit_emu::ExtBufSlot*>(startBufhandle);
    ext_num_ = num;
    for (uint8_t k = 0; k < num; ++k) ext_start_[k].set = false;  // this plan's handles, written next
    qid_ = -1;
  }
  template <class P>
  void InitBufHandle(P* bufPool, uint32_t index, TBufHandle bufhandle, uint32_t curPoolAddr, uint32_t len, OPKIT_LOC) {
    (void)index;  // CANN ignores it too: the handle passed is the one written
    opkit_emu::ext_slot_init(*bufPool, bufhandle, curPoolAddr, len, "TQue::InitBufHandle", loc);
  }
};

namespace detail {
template <TPosition pos, auto mask>
constexpr bool que_config_ok() {  // ND/NZ conversion: nd2nz on A1/B1, nz2nd on CO2 only (TQue简介.md)
  if constexpr (std::is_same<decltype(mask), const TQueConfig*>::value)
    return (!mask->nd2nz || pos == TPosition::A1 || pos == TPosition::B1) && (!mask->nz2nd || pos == TPosition::CO2);
  return true;
}
}  // namespace detail
template <TPosition pos, int32_t depth, auto mask>
class TQue : public TQueImpl<pos, depth> {
  static_assert(detail::que_config_ok<pos, mask>(),
                "opkit emulator: TQueConfig nd2nz is for A1/B1 queues and nz2nd for CO2 queues only");
};
template <TPosition src, TPosition dst, int32_t depth, auto mask>
class TQueBind : public TQueImpl<(src == TPosition::VECCALC || src == TPosition::GM) ? dst : src, depth> {};

}  // namespace AscendC

namespace opkit_emu {
// TBuf's buffer record and its checks, the same for every position and element type: compiled once
// (OPKIT_EMU_RT), the template below only makes the tensor.
class TBufCore {
 public:
  int buf_ = -1;
  ExtBufSlot* ext_start_ = nullptr;

 protected:
  const BufRec& rec(const char* call, SrcLoc loc);
};
#if OPKIT_EMU_RT_DEFS  // TBufCore members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT const BufRec& TBufCore::rec(const char* call, SrcLoc loc) {
  BlockCtx& c = ctx();
  if (buf_ < 0 && ext_start_) {  // planned from its handle at first use
    const ExtBufSlot& s = ext_slot(ext_start_, 0, 1, call, loc);
    buf_ = static_cast<int>(new_buf(s.addr, s.len, BufKind::TBuf, -1, s.pipe));
  }
  if (buf_ < 0 || static_cast<size_t>(buf_) >= c.bufs.size())
    c.fail("queue-protocol", call, loc, "TBuf used before TPipe::InitBuffer");
  const BufRec& b = c.bufs[buf_];
  if (b.pipe != c.live_pipe) c.fail("queue-protocol", call, loc, "TBuf belongs to a TPipe that was destroyed");
  return b;
}
#endif
}  // namespace opkit_emu

namespace AscendC {

template <TPosition pos>
class TBuf : public opkit_emu::TBufCore {
 public:
  template <class T>
  LocalTensor<T> Get(OPKIT_LOC) {
    const opkit_emu::BufRec& b = rec("TBuf::Get", loc);
    auto t = opkit_emu::make_tensor<T>(static_cast<uint32_t>(buf_), 0, b.len);
    t.m_.pos = pos;
    return t;
  }
  template <class T>
  LocalTensor<T> Get(uint32_t len, OPKIT_LOC) {
    const opkit_emu::BufRec& b = rec("TBuf::Get", loc);
    odd_int4<T>(len, "TBuf::Get", "len", loc);
    if (opkit_emu::elem_bytes<T>(len) > b.len)
      opkit_emu::fail("tbuf-bounds", "TBuf::Get", loc,
                      opkit_emu::strf("%u elements of %zu bytes exceed the buffer's %u bytes", len, sizeof(T), b.len));
    auto t = opkit_emu::make_tensor<T>(static_cast<uint32_t>(buf_), 0, static_cast<uint32_t>(opkit_emu::elem_bytes<T>(len)));
    t.m_.pos = pos;
    return t;
  }
  // CANN takes len / 2 bytes (kernel_tbuf_impl.h:34-35): an odd int4b_t count would lose its last element silently,
  // so it is api-argument here as for LocalTensor::SetSize.
  template <class T>
  static void odd_int4(uint32_t n, const char* call, const char* what, opkit_emu::SrcLoc loc) {
    if (opkit_emu::is_int4_v<T> && n % 2)
      opkit_emu::fail("api-argument", call, loc,
                      opkit_emu::strf("int4b_t %s %u is odd: a tensor holds whole bytes, two elements each", what, n));
  }
  // size in elements, bufOffset in bytes from the buffer start.
  template <class T>
  LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, OPKIT_LOC) {
    const opkit_emu::BufRec& b = rec("TBuf::GetWithOffset", loc);
    odd_int4<T>(size, "TBuf::GetWithOffset", "size", loc);
    if (static_cast<uint64_t>(bufOffset) + opkit_emu::elem_bytes<T>(size) > b.len)
      opkit_emu::fail("tbuf-bounds", "TBuf::GetWithOffset", loc,
                      opkit_emu::strf("offset %u bytes + %u elements of %zu bytes exceed the buffer's %u bytes",
                                      bufOffset, size, sizeof(T), b.len));
    if (bufOffset % opkit_emu::kBlk != 0)
      opkit_emu::fail("ub-alignment", "TBuf::GetWithOffset", loc,
                      opkit_emu::strf("bufOffset %u is not a multiple of 32 bytes", bufOffset));
    auto t = opkit_emu::make_tensor<T>(static_cast<uint32_t>(buf_), bufOffset, static_cast<uint32_t>(opkit_emu::elem_bytes<T>(size)));
    t.m_.pos = pos;
    return t;
  }
  // Members CANN's TBuf inherits from TQueBind (kernel_tpipe.h): a TBuf has one fixed buffer, so
  // AllocTensor / DeQue hand out the whole buffer and EnQue / FreeTensor only check the tensor is live.
  template <class T>
  LocalTensor<T> AllocTensor(OPKIT_LOC) { return Get<T>(loc); }
  template <class T>
  LocalTensor<T> DeQue(OPKIT_LOC) { return Get<T>(loc); }
  template <class T>
  void EnQue(const LocalTensor<T>& t, OPKIT_LOC) { t.m_.check_live("TBuf::EnQue", loc, "tensor"); }
  template <class T>
  void FreeTensor(const LocalTensor<T>& t, OPKIT_LOC) { t.m_.check_live("TBuf::FreeTensor", loc, "tensor"); }
  // A user pool's buffer (EXTERN_IMPL_BUFPOOL; CANN impl/basic_api/kernel_tbuf_impl.h:203-214: num must be 1).
  void InitStartBufHandle(TBufHandle startBufhandle, uint8_t num, uint32_t len, OPKIT_LOC) {
    (void)len;
    if (num != 1)
      opkit_emu::fail("api-argument", "TBuf::InitStartBufHandle", loc,
                      opkit_emu::strf("num is %u; a TBuf has one buffer (CANN asserts num == 1)", unsigned(num)));
    ext_start_ = reinterpret_cast<opkit_emu::ExtBufSlot*>(startBufhandle);
    ext_start_->set = false;
    buf_ = -1;
  }
  template <class P>
  void InitBufHandle(P* bufPool, uint32_t index, TBufHandle bufhandle, uint32_t curPoolAddr, uint32_t len, OPKIT_LOC) {
    (void)index;
    opkit_emu::ext_slot_init(*bufPool, bufhandle, curPoolAddr, len, "TBuf::InitBufHandle", loc);
  }
};

// The buffer planning a TPipe and a TBufPool share: InitBuffer of queues and TBufs, carved from the pipe's UB or the
// pool's range (TPipeBase::carve). A pool's buffers carry its pipe's id, so they live and die with the pipe.
class TPipeAllocator : public opkit_emu::TPipeBase {
 public:
  template <TPosition pos, int32_t depth, auto mask>
  bool InitBuffer(TQue<pos, depth, mask>& que, uint8_t num, uint32_t len, OPKIT_LOC) {
    // CANN: TQue<VECIN> is TQueBind<GM, VECIN>, TQue<VECOUT> is TQueBind<VECOUT, GM>.
    const TPosition s = pos == TPosition::VECIN ? TPosition::GM : pos;
    const TPosition d = pos == TPosition::VECOUT ? TPosition::GM : pos;
    return init_queue(que, pos, depth, num, len, loc, s, d);
  }
  template <TPosition s, TPosition d, int32_t depth, auto mask>
  bool InitBuffer(TQueBind<s, d, depth, mask>& que, uint8_t num, uint32_t len, OPKIT_LOC) {
    return init_queue(que, s == TPosition::VECCALC || s == TPosition::GM ? d : s, depth, num, len, loc, s, d);
  }
  // The queue form on a TBuf: CANN's TBuf<pos> derives from TQueBind<pos, pos, 0, 0> (asc-devkit
  // include/basic_api/kernel_tpipe.h), so InitBuffer(T& que, num, len) compiles for it and public kernels write
  // InitBuffer(tbuf, 1, len). With one block that is the TBuf form; what Get() sees after more blocks is not
  // documented (InitBuffer.md lists TQue, TQueBind and TSCM for this form), so that stops.
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint8_t num, uint32_t len, OPKIT_LOC) {
    if (num != 1)
      opkit_emu::ctx().fail("api-argument", "TPipe::InitBuffer", loc,
                            opkit_emu::strf("the queue form on a TBuf with num %u: only num 1 is defined for a TBuf "
                                            "(its one buffer); use InitBuffer(tbuf, len)", unsigned(num)));
    return InitBuffer(buf, len, loc);
  }
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len, OPKIT_LOC) {
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    check_live("TPipe::InitBuffer", loc);
    if (buf.buf_ >= 0 && static_cast<size_t>(buf.buf_) < c.bufs.size() && c.bufs[buf.buf_].pipe == id_)
      c.fail("queue-protocol", "TPipe::InitBuffer", loc, "this TBuf was already initialised");
    uint32_t off = carve(len, 1, "TPipe::InitBuffer", loc);
    uint32_t rounded = (len + 31u) / 32u * 32u;
    buf.buf_ = static_cast<int>(opkit_emu::new_buf(off, rounded, opkit_emu::BufKind::TBuf, -1, id_));
    return true;
  }
  // TPipe::InitBufPool / TBufPool::InitBufPool (资源管理/TPipe/InitBufPool.md, TBufPool/InitBufPool-55.md; A2
  // supported): a sub-pool of len bytes (rounded up to 32) carved from this pipe's or pool's UB, or sharing
  // shareBuf's start (len at most shareBuf's length, the page). A pool is a range, not a buffer.
  template <class T>
  bool InitBufPool(T& bufPool, uint32_t len, OPKIT_LOC) {
    check_live("InitBufPool", loc);
    auto& pool = opkit_emu::PoolAccess::get(bufPool);  // a TBufPool or a user pool (EXTERN_IMPL_BUFPOOL)
    pool_fresh(pool, loc);
    const uint32_t off = carve(len, 1, "InitBufPool", loc);
    nbufs_ -= 1;
    if (own_bufs_) own_bufs_->pop_back();  // a range for the pool, which makes its buffers itself
    pool.attach_(id_, off, (len + 31u) / 32u * 32u);
    return true;
  }
  template <class T, class U>
  bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf, OPKIT_LOC) {
    check_live("InitBufPool", loc);
    auto& pool = opkit_emu::PoolAccess::get(bufPool);
    auto& share = opkit_emu::PoolAccess::get(shareBuf);
    pool_fresh(pool, loc);
    if (share.limit_ == 0)
      opkit_emu::fail("queue-protocol", "InitBufPool", loc, "shareBuf is not initialised (InitBufPool it first)");
    const uint32_t rounded = (len + 31u) / 32u * 32u;
    if (rounded > share.limit_ - share.base_)
      opkit_emu::fail("ub-capacity", "InitBufPool", loc,
                      opkit_emu::strf("len %u bytes is more than shareBuf's %u bytes (the page: at most its length)",
                                      rounded, share.limit_ - share.base_));
    pool.attach_(id_, share.base_, rounded);
    return true;
  }

 protected:
  template <class T>
  static void pool_fresh(const T& bufPool, opkit_emu::SrcLoc loc) {
    if (bufPool.limit_ != 0)
      opkit_emu::fail("queue-protocol", "InitBufPool", loc, "this TBufPool was already initialised");
  }
  void check_live(const char* call, opkit_emu::SrcLoc loc) {
    if (is_pool_ && limit_ == 0) opkit_emu::fail("queue-protocol", call, loc, "TBufPool used before InitBufPool");
    if (opkit_emu::ctx().live_pipe != id_)
      opkit_emu::fail("queue-protocol", call, loc, "TPipe used after Destroy or after another TPipe was created");
  }
  static void queue_pipes(TPosition s, TPosition d, int8_t& producer, int8_t& consumer) {
    opkit_emu::queue_event_pipes(s, d, producer, consumer);
  }
  // Compiled once (OPKIT_EMU_RT): every TQue / TQueBind is a QueCore.
  bool init_queue(opkit_emu::QueCore& que, TPosition pos, int32_t depth, uint8_t num, uint32_t len,
                  opkit_emu::SrcLoc loc, TPosition src, TPosition dst);
};
#if OPKIT_EMU_RT_DEFS  // TPipeAllocator members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT bool TPipeAllocator::init_queue(opkit_emu::QueCore& que, TPosition pos, int32_t depth, uint8_t num,
                                             uint32_t len, opkit_emu::SrcLoc loc, TPosition src, TPosition dst) {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  check_live("TPipe::InitBuffer", loc);
  if (que.qid_ >= 0 && static_cast<size_t>(que.qid_) < c.queues.size() &&
      c.bufs[c.queues[que.qid_].first_buf].pipe == id_)
    c.fail("queue-protocol", "TPipe::InitBuffer", loc, "this queue was already initialised");
  if (num == 0) c.fail("queue-protocol", "TPipe::InitBuffer", loc, "num (buffer count) is 0");
  uint32_t& per_pos = c.queue_bufs_per_pos[static_cast<int>(pos) & 15];
  if (per_pos + num > opkit_emu::kMaxQueBuffersPerPos)
    c.fail("buffer-limit", "TPipe::InitBuffer", loc,
           opkit_emu::strf("%u queue buffers on one TPosition (%u already): at most %u are allowed on this chip",
                           num, per_pos, opkit_emu::kMaxQueBuffersPerPos));
  uint32_t off = carve(len, num, "TPipe::InitBuffer", loc);
  per_pos += num;
  uint32_t rounded = (len + 31u) / 32u * 32u;
  opkit_emu::QueueRec q;
  q.pos = static_cast<int>(pos);
  q.depth = depth;
  q.num = num;
  q.init_loc = loc;
  queue_pipes(src, dst, q.producer, q.consumer);
  int qid = static_cast<int>(c.queues.size());
  q.first_buf = static_cast<uint32_t>(c.bufs.size());
  for (uint32_t i = 0; i < num; ++i)
    opkit_emu::new_buf(off + i * rounded, rounded, opkit_emu::BufKind::Queue, qid, id_);
  opkit_emu::push_queue(c, std::move(q));
  que.qid_ = qid;
  return true;
}
#endif

class TPipe : public TPipeAllocator {
 public:
  TPipe() {
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    id_ = ++c.pipe_serial;
    c.live_pipe = id_;
    c.pipe = this;
  }
  ~TPipe() {
    if (!opkit_emu::t_ctx) return;
    if (opkit_emu::t_ctx->pipe == this) Release();
    else if (is_copy_) EndCopy();
  }
  // A TPipe passed by value (ops-cv grid_sample: `Init(..., TPipe pipeIn)`, then `pipe = pipeIn`). CANN's TPipe has
  // the implicit copy (asc-devkit 82b89a15 include/basic_api/kernel_tpipe.h:448-453 declares none): the copy holds
  // its own copy of the pipe's buffer table (the member g_tpipeImpl; a queue's bufStart points into the table of the
  // pipe whose InitBuffer planned it, impl/basic_api/kernel_tpipe_impl.h:228), and copying runs no Init, so the copy
  // is not the pipe GetTPipePtr() returns (:157-165). Its destructor runs Destroy() (:80-86): DestroyWithoutPipeAll
  // waits the free event of every FREE buffer in its table (:563-569), then pipe_barrier(PIPE_ALL) (:595-600). It
  // frees no UB. So, modelled here:
  //  - a copy of a pipe no queue buffer of which has a pending free event, planning nothing itself: a PIPE_ALL
  //    barrier when it ends, nothing else (grid_sample: the entry's fresh pipe, copied, assigned, destroyed);
  //  - a copy of a pipe whose queue buffers were freed (FreeTensor sets the free event, kernel_tquebind_impl.h:
  //    544-545): its Destroy waits those events, and the pipe's next AllocTensor of the buffer (:125), or else the
  //    pipe's own Destroy at the kernel's end (its table still records the events, :563-569), waits the same event
  //    again, which nobody sets -- the device hangs: queue-protocol when the copy ends;
  //  - buffers planned through the copy: their table ends with it; a later use of their queue or TBuf is
  //    queue-protocol ("belongs to a TPipe that was destroyed").
  // Not modelled: the copy shares the original's id, so it is usable only while the original is live (a copy used
  // after the original ends is reported as "destroyed" / "used after Destroy"; on the device it is wrong as well:
  // GetTPipePtr(), which AllocTensor / FreeTensor use, still points at the dead original, :157-165).
  TPipe(const TPipe& o, OPKIT_LOC) : TPipeAllocator(o), copy_loc_(loc), is_copy_(true) {
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    own_bufs_ = &own_;
    for (const opkit_emu::BufRec& b : c.bufs)  // freed at least once (gen bumped by AllocTensor and FreeTensor)
      if (b.pipe == id_ && b.kind == opkit_emu::BufKind::Queue && b.queue >= 0 &&
          b.state == opkit_emu::BufState::Free && (b.gen > 1 || c.queues[b.queue].depth == 0) &&
          c.queues[b.queue].producer >= 0)
        ++pending_free_;
  }
  // Copy-assignment, which CANN's TPipe has implicitly (ops-nn norm/layer_norm_grad_v3, add_layer_norm_grad,
  // ada_layer_norm_grad: a kernel class's member `TPipe pipe` assigned the entry's pipe, `pipe = pipeIn`): the pool
  // state (its identity, the allocation cursor, the buffer count) is copied and this object becomes the pipe in use,
  // the one whose destruction releases the buffers. Both objects then hold their own copy of the cursor, as on the
  // device: buffers planned through both would overlap.
  TPipe& operator=(const TPipe& o) {
    if (this == &o) return *this;
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    id_ = o.id_;
    used_ = o.used_;
    nbufs_ = o.nbufs_;
    std::copy(std::begin(o.next_event_), std::end(o.next_event_), std::begin(next_event_));
    c.live_pipe = id_;
    c.pipe = this;
    return *this;
  }

  void Destroy() { Release(); }
  void Reset() { Release(); opkit_emu::ctx().live_pipe = id_; opkit_emu::ctx().pipe = this; }
  // CANN's TPipe::Init (asc-devkit 82b89a15 impl/basic_api/kernel_tpipe_impl.h:88-97) is ResetPool: the pipe's
  // buffers are dropped and InitBuffer starts again at UB offset 0 (ops-math pad_v3_grad_replication re-plans its
  // UB this way between phases). Here as Reset: a tensor still allocated is reported as a leak, as on Reset.
  void Init() { Reset(); }

  template <HardEvent evt> TEventID AllocEventID() { return next_event_[static_cast<int>(evt)]++ % 8; }
  template <HardEvent evt> void ReleaseEventID(TEventID) {}
  template <HardEvent evt> TEventID FetchEventID() { return 0; }
  TEventID FetchEventID(HardEvent) { return 0; }

 private:
  // Buffers of a released pipe become invalid; what is still allocated is a leak (checked at kernel end).
  void Release();
  void EndCopy();  // a copy's Destroy(), as above
  opkit_emu::SrcLoc copy_loc_{nullptr, 0};
  bool is_copy_ = false;
  uint32_t pending_free_ = 0;  // queue buffers of the pipe with a free event set when the copy was made
  std::vector<uint32_t> own_;  // buffers planned through the copy
};
#if OPKIT_EMU_RT_DEFS  // TPipe members compiled once (OPKIT_EMU_RT, config.h)
// A buffer whose pipe (or the copy that planned it) ends: invalid from now on; a tensor still allocated is a leak.
static void end_buf(opkit_emu::BlockCtx& c, opkit_emu::BufRec& b, const char* ended) {
  if (b.state == opkit_emu::BufState::Allocated || b.state == opkit_emu::BufState::Queued ||
      b.state == opkit_emu::BufState::Dequeued)
    c.deferred.emplace_back("queue-protocol", "TQue::AllocTensor", b.alloc_loc, static_cast<int>(c.idx),
                            opkit_emu::strf("tensor allocated here (UB offset %u) was never freed before %s", b.off,
                                            ended));
  b.state = opkit_emu::BufState::Free;
  b.gen++;
  b.pipe = -b.pipe;  // its queue / TBuf is "of a TPipe that was destroyed"
}
OPKIT_EMU_RT void TPipe::Release() {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  for (opkit_emu::BufRec& b : c.bufs)
    if (b.pipe == id_) end_buf(c, b, "the TPipe was released");
  for (auto& n : c.queue_bufs_per_pos) n = 0;
  used_ = 0;
  nbufs_ = 0;
  if (c.pipe == this) c.pipe = nullptr;
  if (c.live_pipe == id_) c.live_pipe = opkit_emu::BlockCtx::kNoLivePipe;
}
OPKIT_EMU_RT void TPipe::EndCopy() {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  c.hz.barrier_all();  // Destroy's pipe_barrier(PIPE_ALL)
  if (pending_free_)
    c.deferred.emplace_back(
        "queue-protocol", "TPipe (a copy)", copy_loc_, static_cast<int>(c.idx),
        opkit_emu::strf("this copy of the TPipe (a TPipe passed by value) was destroyed while %u of the pipe's queue "
                        "buffers had a free event set: its Destroy() waits those events, and the pipe's next "
                        "AllocTensor of each, or the pipe's own Destroy() at the kernel's end, waits the same event "
                        "again, which nobody sets -- on the device the kernel hangs (asc-devkit "
                        "impl/basic_api/kernel_tpipe_impl.h:80-86, 563-569); pass the TPipe "
                        "by pointer or reference",
                        pending_free_));
  for (uint32_t id : own_)
    if (c.bufs[id].pipe == id_) end_buf(c, c.bufs[id], "the copy of the TPipe that planned it was destroyed");
}
#endif

// TBufPool<pos, bufIDSize> (资源管理/TBufPool/*.md; include/basic_api/kernel_tpipe.h:262-295): a range of the UB
// taken by TPipe::InitBufPool or TBufPool::InitBufPool, planned with InitBuffer / InitBufPool like a TPipe
// (overflowing it is ub-capacity). Its buffers belong to the pipe (they end with it). Reset() ends the pool's use:
// its buffers stay, their contents become undefined (poison here) -- the page: "the Buffer contents may be
// overwritten" when another pool shares the range; a tensor still allocated from the pool is queue-protocol
// (the page: AllocTensor/FreeTensor paired when switching pools).
constexpr uint32_t defaultBufIDSize = 4;  // impl/basic_api/kernel_tpipe_base.h:157
template <TPosition pos, uint32_t bufIDSize = defaultBufIDSize>
class TBufPool : public TPipeAllocator {
 public:
  static constexpr TPosition poolPos = pos;
  TBufPool() { is_pool_ = true; }
  void Reset(OPKIT_LOC) {
    if (limit_ == 0) opkit_emu::fail("queue-protocol", "TBufPool::Reset", loc, "TBufPool used before InitBufPool");
    opkit_emu::BlockCtx& c = opkit_emu::ctx();
    for (const opkit_emu::BufRec& b : c.bufs) {
      if (b.pipe != id_ || b.off < base_ || b.off >= limit_) continue;
      if (b.state == opkit_emu::BufState::Allocated || b.state == opkit_emu::BufState::Queued ||
          b.state == opkit_emu::BufState::Dequeued)
        opkit_emu::fail("queue-protocol", "TBufPool::Reset", loc,
                        opkit_emu::strf("a tensor of this pool (UB offset %u) is still allocated: free it before "
                                        "switching pools", b.off));
    }
    if (c.checks) opkit_emu::shadow_clear(base_, limit_ - base_);
  }
  void attach_(int pipe, uint32_t off, uint32_t len) {
    id_ = pipe;
    base_ = used_ = off;
    limit_ = off + len;
    nbufs_ = 0;
  }
};

}  // namespace AscendC
// At global scope, as CANN declares it (asc-devkit 82b89a15 include/basic_api/kernel_common.h:99-111), and in
// AscendC too (kernels written here call AscendC::GetTPipePtr): one function, so neither spelling is ambiguous.
inline AscendC::TPipe* GetTPipePtr() { return static_cast<AscendC::TPipe*>(opkit_emu::ctx().pipe); }
namespace AscendC {
using ::GetTPipePtr;

// PopStackBuffer<T, pos>(LocalTensor<T>&) (asc-devkit 82b89a15 impl/basic_api/kernel_pop_stack_buffer.h:27-70): the
// UB the TPipe has not handed out -- from the end of its buffers to the end of UB less the 64 bytes A2 keeps for
// KFC messages -- as a tensor. A temporary: a later InitBuffer of the same pipe takes the same bytes, as on the NPU.
// Fresh, so its contents are poison until written; no TPipe or no UB left is queue-protocol / ub-capacity.
template <class T, TPosition pos>
bool PopStackBuffer(LocalTensor<T>& pop, OPKIT_LOC) {
  static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC,
                "opkit emulator: PopStackBuffer pops Unified Buffer only (hardType should be UB)");
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  if (!c.pipe || c.live_pipe != c.pipe->id_)
    c.fail("queue-protocol", "PopStackBuffer", loc, "no live TPipe (CANN asserts GetTPipePtr() != nullptr)");
  const uint32_t start = c.pipe->used_, end = opkit::kPlatform.ub_total_bytes - 64;
  if (end <= start)
    c.fail("ub-capacity", "PopStackBuffer", loc,
           opkit_emu::strf("the TPipe already uses %u bytes of UB: nothing left to pop below %u", start, end));
  const uint32_t id = opkit_emu::new_buf(start, end - start, opkit_emu::BufKind::TBuf, -1, c.pipe->id_);
  pop = opkit_emu::make_tensor<T>(id, 0, end - start);
  pop.m_.pos = pos;
  return true;
}

}  // namespace AscendC
