// Per-block emulator state (UB with its init-shadow, buffers, queues, sync flags, counters) and the
// rule-violation exception. Every API call checks its operands once per call; hot loops never check.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "opkit_emu/config.h"
#include "opkit_emu/types.h"
#include "opkit_emu/diag.h"
#include "opkit_emu/hazard.h"
#include "opkit_emu/shape_info.h"

namespace opkit_emu {

// Per-API vector counters (elements), so the roofline model can weight ops differently. One list (an
// X-macro) gives the enum and the names the stats report.
#define OPKIT_EMU_VEC_OPS(X)                                                                                  \
  X(Add) X(Sub) X(Mul) X(Div) X(Max) X(Min) X(Adds) X(Muls) X(Maxs) X(Mins) X(Exp) X(Ln) X(Abs) X(Sqrt)       \
  X(Rsqrt) X(Reciprocal) X(Relu) X(LeakyRelu) X(Duplicate) X(Cast) X(ReduceSum) X(ReduceMax) X(ReduceMin)  \
  X(Compare) X(Select) X(Other)
enum class VecOp : int {
#define OPKIT_EMU_VEC_OP_ENUM(name) name,
  OPKIT_EMU_VEC_OPS(OPKIT_EMU_VEC_OP_ENUM)
#undef OPKIT_EMU_VEC_OP_ENUM
  Count_
};
inline const char* vec_op_name(int i) {
#define OPKIT_EMU_VEC_OP_NAME(name) #name,
  static const char* names[] = {OPKIT_EMU_VEC_OPS(OPKIT_EMU_VEC_OP_NAME)};
#undef OPKIT_EMU_VEC_OP_NAME
  return names[i];
}

struct BlockStats {
  uint64_t gm_read_bytes = 0, gm_write_bytes = 0, vector_elems = 0, vector_repeats = 0, ub_high_water = 0;
  uint64_t op_elems[static_cast<int>(VecOp::Count_)] = {};
  uint64_t op_calls[static_cast<int>(VecOp::Count_)] = {};
};

struct GmRegion {
  const uint8_t* base;
  uint64_t bytes;
  int arg;  // kernel argument index, -1 for GmAlloc'ed memory
  // bytes of real data from base (launch ABI arg_data_bytes); [data, bytes) is the allocation's padding, where the
  // UB->GM sinks let poison land (datacopy.h sink_rows). Unset: all of it.
  uint64_t data = ~uint64_t(0);
  // A tensor list's buffer (import-cann's list_buffer): each member's data [off, off + data) inside its own
  // allocation [off, off + alloc); a member's bytes past its data are its padding, as a lone tensor's are. Empty:
  // the region is one tensor (`data` above). Given per launch (opkit_kernel_set_list_members).
  struct Member { uint64_t off, data, alloc; };
  std::vector<Member> members{};   // an initializer, so aggregate initialisations without it stay -Wextra clean
  // A checked launch's record of what it did to its arguments (module_launch_fn's; null: none kept): [0] a bit per
  // argument a GM store wrote (gm_mark_write), [1] a bit per argument whose padding an access touched (gm_check).
  // The torch binding copies back only the staged inputs written and, in a fast launch of the same key, stages only
  // those whose padding was touched (opkit_kernel_last_marks, launch_abi.h).
  std::atomic<uint64_t>* marks = nullptr;
  void mark(int which) const {
    if (!marks || arg < 0 || arg >= 64) return;
    const uint64_t bit = uint64_t(1) << arg;
    // a load first: after the first store most find the bit set, and reading leaves the line shared by the blocks
    if (!(marks[which].load(std::memory_order_relaxed) & bit)) marks[which].fetch_or(bit, std::memory_order_relaxed);
  }
  const uint8_t* data_end() const { return base + (data < bytes ? data : bytes); }
  // The data end that applies to a copy over [g, g + span): the member's when the copy stays inside one member's
  // allocation; else (the list's descriptor words, a copy across members) all of the buffer, and sink_rows then
  // checks each member's padding it covers as padding (datacopy.h sink_members).
  const uint8_t* data_end_for(const uint8_t* g, uint64_t span) const {
    if (members.empty()) return data_end();
    for (const Member& m : members) {
      const uint8_t* s = base + m.off;
      if (g >= s && g < s + m.alloc) return g + span <= s + m.alloc ? s + m.data : base + bytes;
    }
    return base + bytes;
  }
  // Where padding may start: gm_pad.h's table covers [pad_begin, end).
  const uint8_t* pad_begin() const {
    const uint8_t* p = data_end();
    for (const Member& m : members) p = std::min(p, base + m.off + m.data);
    return p;
  }
};

enum class BufKind : uint8_t { Queue, TBuf };
enum class BufState : uint8_t { Free, Allocated, Queued, Dequeued, Fixed };

struct BufRec {
  uint32_t off = 0, len = 0;  // UB byte offset, rounded length
  uint32_t gen = 1;           // bumped on every AllocTensor and FreeTensor: stale handles mismatch
  BufState state = BufState::Free;
  BufKind kind = BufKind::Queue;
  int queue = -1;
  int pipe = 0;
  SrcLoc alloc_loc{nullptr, 0};
  Clock enque_snap, free_snap;  // hazard clocks handed over by EnQue (to DeQue) and FreeTensor (to AllocTensor)
  int user_evt = -1;  // EnQue<srcUserPos, dstUserPos>: the pair (src * 256 + dst), checked by the DeQue naming one
};

struct QueueRec {
  int pos = 0, depth = 1;
  uint32_t first_buf = 0, num = 0, next = 0;
  std::vector<uint32_t> fifo;  // buffer ids, front = oldest
  SrcLoc init_loc{nullptr, 0};
  int8_t producer = -1, consumer = -1;  // pipes the queue's events order (-1: same pipe, no event)
};

struct AtomicRecord {  // a UB->GM copy under SetAtomicAdd / Max / Min, applied in block order at the launch end or a SyncAll / GroupBarrier round
  uint8_t* dst;
  int dtype;  // 0 float, 1 half, 2 bf16, 3 int32, 4 int16, 5 int8; + 8 for SetAtomicMax, + 16 for SetAtomicMin
  std::vector<uint8_t> data;
};

struct FlagRec {
  int32_t count = 0;
  SrcLoc last_set{nullptr, 0};
  std::vector<Clock> pending;  // what each unwaited SetFlag hands over, oldest first
};
// The flags a block has used, by (HardEvent, event id): a short list searched linearly. Most kernels use one
// or two; a full [64][8] table built and destroyed per block was a tenth of a small launch.
class FlagTable {
 public:
  FlagRec& at(int event, int id) {
    const uint16_t key = static_cast<uint16_t>(event * 8 + id);
    for (auto& e : v_)
      if (e.first == key) return e.second;
    v_.emplace_back(key, FlagRec{});
    if (!spare_.empty()) {  // an earlier block's emptied pending list: its buffer, not a new one
      v_.back().second.pending = std::move(spare_.back());
      spare_.pop_back();
    }
    return v_.back().second;
  }
  // No flags used (as a new table), the pending lists' buffers kept for the next block's flags (reset_block).
  void reset() {
    for (auto& e : v_) {
      e.second.pending.clear();
      spare_.push_back(std::move(e.second.pending));
    }
    v_.clear();
  }
  template <class F>
  void each(F f) const {
    for (const auto& e : v_) f(e.first / 8, e.first % 8, e.second);
  }
 private:
  std::vector<std::pair<uint16_t, FlagRec>> v_;
  std::vector<std::vector<Clock>> spare_;
};

class TPipeBase;

struct BlockCtx {
  int64_t idx = 0, num = 1;
  uint64_t tiling_key = 0;
  uint8_t* ub = nullptr;      // kChip.ub_total_bytes, 64-byte aligned
  uint64_t* shadow = nullptr;  // one bit per UB byte: 1 = defined (written from defined data)
  // Bitmask bytes (Compare results) that are only partly defined: UB offset -> defined bits. Consulted
  // only where the shadow says "not defined"; entries in a range are dropped when it is poisoned again.
  std::vector<std::pair<uint32_t, uint8_t>> partial_bits;
  HazardState hz;
  std::vector<BufRec> bufs;  // reserved for 32 (most kernels): no regrowth per block
  std::vector<QueueRec> queues;
  std::vector<std::vector<uint32_t>> spare_fifos;  // emptied fifos of this thread's earlier blocks (reset_block)
  int pipe_serial = 0;
  // No pipe live: a value no pipe id (1, 2, ...) and no ended pipe's mark (-id, tpipe.h end_buf) can take; -1 was
  // the first pipe's mark, so its buffers looked live after it was destroyed.
  // INT_MIN's value, not the macro: <climits> here would give every kernel INT_MAX / INT_MIN as macros, and CANN's
  // kernels declare their own (ops-nn gather_elements_v2_last_dim.h:29 `constexpr int64_t INT_MAX`;
  // tests/emulator/test_cann_build.py test_kernel_operator_leaves_limits_macros_undefined).
  static constexpr int kNoLivePipe = -2147483647 - 1;
  int live_pipe = kNoLivePipe;
  TPipeBase* pipe = nullptr;
  uint32_t queue_bufs_per_pos[16] = {};
  FlagTable flags;
  int atomic_dtype = -1;   // SetAtomicAdd<T> in effect: dtype code
  uint64_t pad_value = 0;   // SetPadValue<T>: the value DataCopyPad fills with when isPad is false (datacopy.h)
  uint8_t pad_value_size = 0;  // its sizeof(T); 0: never set
  std::vector<AtomicRecord> atomics;
  const std::vector<GmRegion>* gm = nullptr;
  BlockStats stats;
  std::vector<Violation> deferred;  // found in destructors, reported when the kernel returns
  // Vector mask register (level0.h): lanes of each repeat in Normal mode, mask_lo = element count in
  // Counter mode. Every block starts in Normal mode with all lanes on.
  uint64_t mask_lo = ~0ull, mask_hi = ~0ull;
  bool mask_counter = false;
  // CmpMask register (compare_select.h): 128 bits the register form of Compare writes and SetCmpMask loads,
  // GetCmpMask stores and the register form of Select reads; cmp_def: which of its bits are defined.
  uint64_t cmp_mask[2] = {0, 0}, cmp_def[2] = {0, 0};
  uint32_t cross_core_waits[16] = {};  // CrossCoreWaitFlag rounds this block has passed, per flagId (sync_all.h)
  float deq_scale = 1.0f;  // SetDeqScale(half): scale of the int32_t -> half Cast (cast.h)
  // CTRL[48] = 0, the saturating float mode (SetOverflow(0), SetCtrlSpr<48, 48>(0); system.h): where it was set.
  // line 0: the non-saturating mode every block starts in here, the one the emulator computes in.
  SrcLoc saturating{nullptr, 0};
  std::vector<AscendC::ShapeInfo> shapes;  // SetShapeInfo: tensors hold an index (1-based) into this table
  uint16_t mrg_sort_used[4] = {0, 0, 0, 0};
  // The special registers the count-form reductions leave their result in (reduce.h: GetReduceRepeatSumSpr,
  // GetReduceRepeatMaxMinSpr): the sum's bits; the max/min value's bits (low 32) and its index (high 32).
  uint64_t acc_val = 0, max_min_cnt = 0;
  uint64_t rsvd_cnt = 0;  // elements the last GatherMask kept (AscendCUtils::GetRsvdCnt)  // GetMrgSortResult: elements of each queue the last MrgSort took
  // false: a launch whose (module, tiling, GM sizes) already passed every rule (docs/emulator.md "Checked once,
  // then fast"): the per-call bookkeeping (operand checks, pipe hazards, poison shadow) is skipped; the data
  // path, GM bounds and the queue state are the same, so outputs are bitwise those of the checked launch.
  bool checks = true;
  int ub_fill = 0xff;  // byte InitBuffer fills a fresh buffer with; -1: none (fast launch)

  // Out of line (OPKIT_EMU_RT): a violation is the cold path of every check, so its throw is compiled once. The
  // `const char*` form spares each call site with a literal detail a std::string temporary and its cleanup.
  [[noreturn]] void fail(const char* rule, const char* call, SrcLoc loc, std::string detail) const;
  [[noreturn]] void fail(const char* rule, const char* call, SrcLoc loc, const char* detail) const;
};
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void BlockCtx::fail(const char* rule, const char* call, SrcLoc loc, std::string detail) const {
  throw Violation(rule, call, loc, static_cast<int>(idx), std::move(detail));
}
OPKIT_EMU_RT void BlockCtx::fail(const char* rule, const char* call, SrcLoc loc, const char* detail) const {
  throw Violation(rule, call, loc, static_cast<int>(idx), detail);
}
#endif

inline thread_local BlockCtx* t_ctx = nullptr;

// A new queue record; its fifo takes the buffer of an earlier block's (emptied) fifo when there is one, so a
// queue's first EnQue does not allocate in every block.
OPKIT_EMU_RT void push_queue(BlockCtx& c, QueueRec q);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void push_queue(BlockCtx& c, QueueRec q) {
  if (!c.spare_fifos.empty()) {
    q.fifo = std::move(c.spare_fifos.back());
    c.spare_fifos.pop_back();
  }
  c.queues.push_back(std::move(q));
}
#endif

// A thread's block context before its next block: every field as a default-constructed BlockCtx has it
// (copied from one), while vector copy-assignment keeps the capacity earlier blocks grew (hazard log, buffer
// records) and the queues' fifos and flags' pending lists are kept emptied; so a small launch does not
// allocate them again.
// Compiled once (OPKIT_EMU_RT): its copy-assignment of a BlockCtx instantiates every member vector's, which an
// inline function in this header made each module compile again (the PCH leaves pending instantiations to them).
OPKIT_EMU_RT void reset_block(BlockCtx& c);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void reset_block(BlockCtx& c) {
  static const BlockCtx fresh;
  std::vector<std::vector<uint32_t>> spare = std::move(c.spare_fifos);
  for (QueueRec& q : c.queues) {
    q.fifo.clear();
    spare.push_back(std::move(q.fifo));
  }
  FlagTable flags = std::move(c.flags);
  flags.reset();
  c = fresh;
  c.spare_fifos = std::move(spare);
  c.flags = std::move(flags);
}
#endif

// After a block: a long checked kernel grows the hazard log and segments to MiBs; a reused context would keep
// that for the thread's life (once per module), so capacity past a small cap is given back.
template <class V>
inline void release_if_large(V& v, size_t max_bytes = 64 * 1024) {
  if (v.capacity() * sizeof(typename V::value_type) > max_bytes) V().swap(v);
}
OPKIT_EMU_RT void trim_block(BlockCtx& c);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void trim_block(BlockCtx& c) {
  release_if_large(c.hz.log);
  release_if_large(c.hz.segs);
  release_if_large(c.partial_bits);
}
#endif

// Outside a launch (e.g. a test calling an API directly) there is no block: that is a usage error. The throw is
// out of line: ctx() is inlined into every API call, its error path need not be.
[[noreturn]] OPKIT_EMU_RT void no_launch();
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void no_launch() {
  throw std::runtime_error("opkit emulator: AscendC API called outside a kernel launch");
}
#endif
#ifdef OPKIT_EMU_COUNT_CTX
// Test builds only (tests/emulator/test_ctx_lookups.py): how many times this thread looked its block context up --
// each is a thread-local access (__tls_get_addr in a module, ~4 % of a small call's samples).
inline thread_local uint64_t t_ctx_lookups = 0;
#endif
inline BlockCtx& ctx() {
#ifdef OPKIT_EMU_COUNT_CTX
  ++t_ctx_lookups;
#endif
  if (!t_ctx) no_launch();
  return *t_ctx;
}
inline uint64_t current_tiling_key() { return ctx().tiling_key; }  // TILING_KEY_VAR (opkit_emu/tiling_macros.h)

[[noreturn]] OPKIT_EMU_RT void fail(const char* rule, const char* call, SrcLoc loc, std::string detail);
[[noreturn]] OPKIT_EMU_RT void fail(const char* rule, const char* call, SrcLoc loc, const char* detail);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void fail(const char* rule, const char* call, SrcLoc loc, std::string detail) {
  throw Violation(rule, call, loc, t_ctx ? static_cast<int>(t_ctx->idx) : -1, std::move(detail));
}
OPKIT_EMU_RT void fail(const char* rule, const char* call, SrcLoc loc, const char* detail) {
  throw Violation(rule, call, loc, t_ctx ? static_cast<int>(t_ctx->idx) : -1, detail);
}
#endif

// ---- UB init-shadow: one bit per UB byte (1 = written), updated with whole-word operations ----
OPKIT_EMU_RT void drop_partial_bits(std::vector<std::pair<uint32_t, uint8_t>>& m, uint32_t off, uint32_t bytes);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void drop_partial_bits(std::vector<std::pair<uint32_t, uint8_t>>& m, uint32_t off, uint32_t bytes) {
  m.erase(std::remove_if(m.begin(), m.end(), [&](const std::pair<uint32_t, uint8_t>& e) { return e.first - off < bytes; }),
          m.end());
}
#endif
OPKIT_EMU_RT void shadow_fill(BlockCtx& c, uint32_t off, uint32_t bytes, bool v);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void shadow_fill(BlockCtx& c, uint32_t off, uint32_t bytes, bool v) {
  if (bytes == 0) return;
  if (!v && !c.partial_bits.empty()) drop_partial_bits(c.partial_bits, off, bytes);
  uint64_t* w = c.shadow;
  const uint32_t end = off + bytes, i = off >> 6, j = (end - 1) >> 6;
  const uint64_t first = ~0ull << (off & 63), last = ~0ull >> (63 - ((end - 1) & 63));
  if (i == j) {
    if (v) w[i] |= first & last; else w[i] &= ~(first & last);
    return;
  }
  if (v) w[i] |= first; else w[i] &= ~first;
  if (j > i + 1) std::memset(w + i + 1, v ? 0xff : 0, (j - i - 1) * sizeof(uint64_t));
  if (v) w[j] |= last; else w[j] &= ~last;
}
#endif
inline void shadow_fill(uint32_t off, uint32_t bytes, bool v) { shadow_fill(ctx(), off, bytes, v); }
inline void shadow_set(uint32_t off, uint32_t bytes) { shadow_fill(ctx(), off, bytes, true); }
inline void shadow_clear(uint32_t off, uint32_t bytes) { shadow_fill(ctx(), off, bytes, false); }
// All of n shadow words fully written? An AND over the words with no early exit, so it vectorises:
// the check of a whole operand (every vector API call) runs at memory speed on 1/8 of its bytes.
OPKIT_EMU_HOT inline bool shadow_words_set(const uint64_t* w, uint32_t n) {
  uint64_t all = ~0ull;
  for (uint32_t k = 0; k < n; ++k) all &= w[k];
  return all == ~0ull;
}
// Offset (from off) of the first unwritten byte in [off, off+bytes), or -1.
OPKIT_EMU_RT int64_t shadow_first_hole(const uint64_t* w, uint32_t off, uint32_t bytes);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT int64_t shadow_first_hole(const uint64_t* w, uint32_t off, uint32_t bytes) {
  if (bytes == 0) return -1;
  const uint32_t end = off + bytes, i = off >> 6, j = (end - 1) >> 6;
  const uint64_t first = ~0ull << (off & 63), last = ~0ull >> (63 - ((end - 1) & 63));
  if (i == j) {
    const uint64_t holes = ~w[i] & first & last;
    return holes ? static_cast<int64_t>(i) * 64 + __builtin_ctzll(holes) - off : -1;
  }
  if ((~w[i] & first) == 0 && (~w[j] & last) == 0 && shadow_words_set(w + i + 1, j - i - 1)) return -1;
  for (uint32_t k = i; k <= j; ++k) {   // there is a hole: find the first one
    uint64_t m = ~0ull;
    if (k == i) m &= first;
    if (k == j) m &= last;
    const uint64_t holes = ~w[k] & m;
    if (holes) return static_cast<int64_t>(k) * 64 + __builtin_ctzll(holes) - off;
  }
  return -1;
}
#endif
inline int64_t shadow_first_hole(uint32_t off, uint32_t bytes) { return shadow_first_hole(ctx().shadow, off, bytes); }

// A finding that is legal on the device but worth knowing: one stderr line per rule, call site and process.
OPKIT_EMU_RT void warn_once(const char* rule, const char* call, SrcLoc loc, const std::string& detail);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void warn_once(const char* rule, const char* call, SrcLoc loc, const std::string& detail) {
  static std::mutex mu;
  static std::vector<std::pair<std::string, std::pair<const char*, int>>> seen;
  std::lock_guard<std::mutex> lk(mu);
  for (const auto& s : seen)
    if (s.first == rule && s.second.first == loc.file && s.second.second == loc.line) return;
  seen.emplace_back(rule, std::make_pair(loc.file, loc.line));
  std::fprintf(stderr, "opkit emulator: warning: [%s] %s at %s:%d: %s\n", rule, call, loc.file ? loc.file : "<unknown>",
               loc.line, detail.c_str());
}
#endif

// ---- GM bounds ----------------------------------------------------------------------------------
// With the block context the caller already holds (one thread-local look-up less).
OPKIT_EMU_RT const GmRegion* gm_find(const BlockCtx& c, const void* p);
inline const GmRegion* gm_find(const void* p) { return gm_find(ctx(), p); }
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT const GmRegion* gm_find(const BlockCtx& c, const void* p) {
  if (!c.gm) return nullptr;
  auto b = static_cast<const uint8_t*>(p);
  for (const GmRegion& r : *c.gm)
    if (b >= r.base && b < r.base + r.bytes) return &r;
  return nullptr;
}
#endif
OPKIT_EMU_RT const GmRegion* gm_ending_at(const uint8_t* b);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT const GmRegion* gm_ending_at(const uint8_t* b) {
  const BlockCtx& c = ctx();
  if (!c.gm) return nullptr;
  for (const GmRegion& r : *c.gm)
    if (b == r.base + r.bytes) return &r;
  return nullptr;
}
#endif
// A GM store at p (a UB->GM copy's, an atomic one's, SetValue's, WriteGmByPassDCache's) in a checked launch: its
// argument is written (GmRegion::marks). Fast launches skip it: the binding learns from the checked launch of a key.
OPKIT_EMU_RT void gm_mark_write(const BlockCtx& c, const void* p);
inline void gm_mark_write(const void* p) { gm_mark_write(ctx(), p); }
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_mark_write(const BlockCtx& c, const void* p) {
  if (!c.checks) return;
  if (const GmRegion* r = gm_find(c, p)) r->mark(0);
}
#endif
OPKIT_EMU_RT void gm_check(const void* p, uint64_t bytes, const char* call, SrcLoc loc, const char* what);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_check(const void* p, uint64_t bytes, const char* call, SrcLoc loc, const char* what) {
  if (bytes == 0) return;
  const BlockCtx& c = ctx();
  const GmRegion* r = gm_find(c, p);
  auto b = static_cast<const uint8_t*>(p);
  if (!r && gm_ending_at(b)) r = gm_ending_at(b);  // starts right at a buffer's end: name that buffer
  if (!r)
    fail("gm-bounds", call, loc,
         strf("%s: GM address %p is not inside any GM buffer passed to the kernel", what, p));
  // past the data: the padding is touched (read or written); recorded by checked launches only, as stores are
  if (b + bytes > r->pad_begin() && c.checks) r->mark(1);
  if (b + bytes > r->base + r->bytes)
    fail("gm-bounds", call, loc,
         strf("%s: byte %llu is past the end of the GM buffer%s (%s); the access covers bytes [%llu, %llu)", what,
              (unsigned long long)r->bytes, r->arg >= 0 ? strf(" of kernel argument %d", r->arg).c_str() : "",
              plural(r->bytes, "byte").c_str(), (unsigned long long)(b - r->base),
              (unsigned long long)(b - r->base + bytes)));
}
#endif

}  // namespace opkit_emu
