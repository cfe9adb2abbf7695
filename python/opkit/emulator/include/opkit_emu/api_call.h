// The per-call hook every API goes through. A call declares the UB ranges it reads and writes and the
// pipe it runs on; commit() then does, once per call (never per element):
//   - operand checks: live buffer, 32-byte alignment, inside the tensor (at declaration);
//   - pipe hazards (hazard.h): a range written on one pipe and read or overwritten on another with no
//     ordering between them is a `pipe-race` naming both calls;
//   - poison (MemorySanitizer-like): UB nothing wrote is poison; values computed from poison stay
//     poison lane by lane; poison is an error only where it escapes: a copy to GM, a scalar GetValue
//     (the way a kernel branches on UB data). Clean sources (the common case) cost one shadow scan.
//
//   ApiCall c(Pipe::V, "Add", loc);
//   c.src(src0, count, "src0").src(src1, count, "src1").dst(dst, count);
//   c.commit();                 // Flow::Lanes: dst lane i is poison iff a source lane i is
//   ... compute ...
//
// Flow::All (reductions): any poisoned source lane poisons every written byte. Flow::Manual: commit()
// only checks hazards and sinks and returns whether a source was poisoned; the API marks what it wrote
// (mark_defined / mark_poison), e.g. DataCopyPad's padding or level-0 forms with masks and strides.
#pragma once
#include "opkit_emu/tensor.h"

namespace opkit_emu {

enum : unsigned {
  kUnaligned = 1,  // no 32-byte alignment rule (scalar access)
  kSink = 2,       // poison read here is an error (the data leaves UB: GM, scalar register)
  kPastView = 4,   // may extend past the view into the rest of its buffer (caller checked)
};
enum class Flow : uint8_t { Lanes, All, Manual };

struct Operand {  // no initialisers: an ApiCall's operand array is filled, never zeroed (hot path)
  const TensorMeta* t;
  const char* name;
  uint32_t off;        // absolute UB byte offset of lane 0
  uint32_t lanes;      // elements (bits, for a bitmask)
  uint32_t lane_bits;  // 8 * sizeof(T), or 1 for a bitmask
  uint32_t rows, row_bytes, pitch;  // rows of row_bytes, pitch bytes apart (rows = 1: contiguous)
  uint32_t lane0;      // the call's element index of lane 0 (a piece of a split copy: sink_rows), for messages
  bool write, sink;

  uint32_t span() const { return (rows - 1) * pitch + row_bytes; }
  uint32_t lanes_per_row() const { return row_bytes * 8 / lane_bits; }
  uint32_t byte_of(uint64_t lane) const {  // lane_bits >= 8
    const uint32_t lpr = lanes_per_row();
    return off + static_cast<uint32_t>(lane / lpr) * pitch + static_cast<uint32_t>(lane % lpr) * (lane_bits / 8);
  }
};

inline bool shadow_bit(uint32_t off) { return (ctx().shadow[off >> 6] >> (off & 63)) & 1; }
// Defined bits of one bitmask byte.
inline uint8_t defined_bits(uint32_t off) {
  if (shadow_bit(off)) return 0xff;
  for (const auto& e : ctx().partial_bits)
    if (e.first == off) return e.second;
  return 0;
}
inline void set_defined_bits(uint32_t off, uint8_t bits) {
  BlockCtx& c = ctx();
  if (bits == 0xff) return shadow_set(off, 1);
  shadow_clear(off, 1);  // also drops an old entry
  if (bits) c.partial_bits.emplace_back(off, bits);
}

class ApiCall {
 public:
  static constexpr int kMaxOperands = 10;  // SoftmaxFlashV3 with update and sharedTmpBuffer has 10

  ApiCall(Pipe p, const char* call, SrcLoc loc) : ApiCall(ctx(), p, call, loc) {}
  // With the block context the caller already holds (saves a thread-local lookup per call).
  ApiCall(BlockCtx& c, Pipe p, const char* call, SrcLoc loc) : c_(c), pipe_(p), call_(call), loc_(loc) {}

  // Contiguous operands of `count` elements of T.
  template <class T>
  ApiCall& src(const AscendC::LocalTensor<T>& t, uint64_t count, const char* name = "src", unsigned flags = 0) {
    return read(t.m_, 0, count, 8 * sizeof(T), name, flags);
  }
  template <class T>
  ApiCall& dst(const AscendC::LocalTensor<T>& t, uint64_t count, const char* name = "dst", unsigned flags = 0) {
    return write(t.m_, 0, count, 8 * sizeof(T), name, flags);
  }
  // General forms: `lanes` lanes of `lane_bits` bits from byte rel_off of the view.
  ApiCall& read(const TensorMeta& t, uint32_t rel_off, uint64_t lanes, uint32_t lane_bits, const char* name,
                unsigned flags = 0) {
    return add(t, rel_off, lanes, lane_bits, 1, 0, name, flags, false);
  }
  ApiCall& write(const TensorMeta& t, uint32_t rel_off, uint64_t lanes, uint32_t lane_bits, const char* name,
                 unsigned flags = 0) {
    return add(t, rel_off, lanes, lane_bits, 1, 0, name, flags, true);
  }
  // Strided operands: `rows` rows of row_bytes bytes, `pitch` bytes apart (copies with gaps).
  ApiCall& read_rows(const TensorMeta& t, uint32_t rel_off, uint32_t rows, uint32_t row_bytes, uint32_t pitch,
                     uint32_t lane_bits, const char* name, unsigned flags = 0) {
    return add(t, rel_off, static_cast<uint64_t>(rows) * row_bytes * 8 / lane_bits, lane_bits, rows, pitch, name,
               flags, false);
  }
  ApiCall& write_rows(const TensorMeta& t, uint32_t rel_off, uint32_t rows, uint32_t row_bytes, uint32_t pitch,
                      uint32_t lane_bits, const char* name, unsigned flags = 0) {
    return add(t, rel_off, static_cast<uint64_t>(rows) * row_bytes * 8 / lane_bits, lane_bits, rows, pitch, name,
               flags, true);
  }

  // Hazards, sinks, poison flow. Returns true when a source lane was poison.
  bool commit(Flow flow = Flow::Lanes);

  const Operand& operand(int k) const { return ops_[k]; }
  // The last operand added is a piece of the call's whole operand starting at element `lane` (named so in messages).
  ApiCall& lane_base(uint32_t lane) {
    if (n_) ops_[n_ - 1].lane0 = lane;
    return *this;
  }
  int size() const { return n_; }
  BlockCtx& block() const { return c_; }  // the call's block context: callers need not look it up again

  static void mark_defined(const Operand& o) {
    if (o.lane_bits == 1 && o.lanes % 8) {  // a bitmask ending inside a byte: the other bits keep their state
      if (o.lanes >= 8) shadow_set(o.off, o.lanes / 8);
      const uint32_t last = o.off + o.lanes / 8;
      set_defined_bits(last, static_cast<uint8_t>(defined_bits(last) | ((1u << (o.lanes % 8)) - 1)));
      return;
    }
    for (uint32_t r = 0; r < o.rows; ++r) shadow_set(o.off + r * o.pitch, o.row_bytes);
  }
  static void mark_poison(const Operand& o) {
    for (uint32_t r = 0; r < o.rows; ++r) shadow_clear(o.off + r * o.pitch, o.row_bytes);
  }
  static bool lane_poisoned(const Operand& o, uint64_t i) {
    if (o.lane_bits == 1) return !((defined_bits(o.off + static_cast<uint32_t>(i / 8)) >> (i % 8)) & 1);
    return shadow_first_hole(o.byte_of(i), o.lane_bits / 8) >= 0;
  }

 private:
  // The saturating mode turns a half / bfloat16 result's inf into +-MAX and NaN into 0 (SetCtrlSpr(ISASI).md,
  // the A2 table: CTRL[48] "浮点数计算时支持half、bfloat16_t"); float results are unchanged. Not modelled: a vector
  // call with a 16-bit operand (half, bfloat16 -- or int16, which the Operand cannot tell apart) stops here.
  void refuse_saturating(const BlockCtx& c) const;
  ApiCall& add(const TensorMeta& t, uint32_t rel_off, uint64_t lanes, uint32_t lane_bits, uint32_t rows,
               uint32_t pitch, const char* name, unsigned flags, bool write);

  static bool has_hole(const uint64_t* shadow, const Operand& o);

  void propagate_lanes();
  static void apply_lanes(const Operand& d, const std::vector<uint8_t>& dp);

  [[noreturn]] void report_sink(const Operand& o) const;
  [[noreturn]] void report_race(const Operand& o, const Race& r) const;

  BlockCtx& c_;
  Pipe pipe_;
  const char* call_;
  SrcLoc loc_;
  Operand ops_[kMaxOperands];
  int n_ = 0;
};
#if OPKIT_EMU_RT_DEFS  // ApiCall members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT bool ApiCall::commit(Flow flow) {
  BlockCtx& c = c_;
  if (c.saturating.line && pipe_ == Pipe::V) refuse_saturating(c);
  if (!c.checks) return false;  // a fast launch: nothing is poison, nothing races (the checked launch proved it)
  const int p = static_cast<int>(pipe_);
  const uint32_t me = c.hz.issue(p, loc_.line, call_, loc_.file);
  for (int k = 0; k < n_; ++k) {
    const Operand& o = ops_[k];
    if (pipe_ == Pipe::S && !o.write) {
      Race r = c.hz.scalar_read(o.off, o.off + o.span(), me);
      if (r.found) report_race(o, r);
      continue;
    }
    Race r = c.hz.access(o.off, o.off + o.span(), p, o.write, me);
    if (r.found) report_race(o, r);
    if (pipe_ == Pipe::S) c.hz.coalesce_scalar(o.off);
  }
  bool poisoned = false;
  for (int k = 0; k < n_; ++k) {
    const Operand& o = ops_[k];
    if (o.write || !has_hole(c.shadow, o)) continue;
    poisoned = true;
    if (o.sink) report_sink(o);
  }
  if (flow == Flow::Manual) return poisoned;
  if (!poisoned) {
    for (int k = 0; k < n_; ++k) {
      const Operand& o = ops_[k];
      if (!o.write) continue;
      if (o.rows == 1 && o.lane_bits != 1) shadow_fill(c, o.off, o.row_bytes, true);  // the usual operand
      else mark_defined(o);
    }
    return false;
  }
  if (flow == Flow::All) {
    for (int k = 0; k < n_; ++k)
      if (ops_[k].write) mark_poison(ops_[k]);
    return true;
  }
  propagate_lanes();
  return true;
}
OPKIT_EMU_RT void ApiCall::refuse_saturating(const BlockCtx& c) const {
  for (int k = 0; k < n_; ++k)
    if (ops_[k].lane_bits == 16)
      fail("not-emulated", call_, loc_,
           strf("%s on 16-bit lanes ('%s') in the saturating float mode (CTRL[48] = 0, set at %s:%d: inf -> "
                "+-MAX, NaN -> 0 for half / bfloat16 results) -- the emulator models the non-saturating mode "
                "only; SetOverflow(1) or SetCtrlSpr<48, 48>(1) before it",
                call_, ops_[k].name, c.saturating.file, c.saturating.line));
}
OPKIT_EMU_RT ApiCall& ApiCall::add(const TensorMeta& t, uint32_t rel_off, uint64_t lanes, uint32_t lane_bits, uint32_t rows,
             uint32_t pitch, const char* name, unsigned flags, bool write) {
  if (n_ == kMaxOperands) throw std::logic_error("opkit emulator: too many operands in one API call");
  if (c_.checks) t.check_live(c_, call_, loc_, name);
  Operand& o = ops_[n_++];
  o.t = &t;
  o.name = name;
  o.off = t.ub_off(c_) + rel_off;
  o.lanes = static_cast<uint32_t>(lanes);
  o.lane_bits = lane_bits;
  o.rows = rows ? rows : 1;
  // contiguous operands (rows = 1, nearly every call) skip the 64-bit division by rows
  o.row_bytes = static_cast<uint32_t>(((o.rows == 1 ? lanes : lanes / o.rows) * lane_bits + 7) / 8);
  o.pitch = rows > 1 ? pitch : o.row_bytes;
  o.lane0 = 0;
  o.write = write;
  o.sink = flags & kSink;
  if (!c_.checks) {  // the operand stays described (some APIs read it back), the checks are skipped
    if (!lanes) --n_;
    return *this;
  }
  if (!(flags & kUnaligned) && o.off % kBlk != 0)
    fail("ub-alignment", call_, loc_,
         strf("%s starts at UB offset %u, not 32-byte aligned (offset %% 32 = %u)", name, o.off, o.off % kBlk));
  const uint64_t need = static_cast<uint64_t>(rel_off) + (lanes ? o.span() : 0);
  if (!(flags & kPastView) && need > t.bytes)
    fail("tensor-bounds", call_, loc_,
         strf("%s: the call touches %llu bytes but the tensor holds only %u bytes", name, (unsigned long long)need,
              t.bytes));
  if (!lanes) --n_;  // nothing touched
  return *this;
}
OPKIT_EMU_RT bool ApiCall::has_hole(const uint64_t* shadow, const Operand& o) {
  for (uint32_t r = 0; r < o.rows; ++r)
    if (shadow_first_hole(shadow, o.off + r * o.pitch, o.row_bytes) >= 0) {
      if (o.lane_bits != 1) return true;
      for (uint32_t i = 0; i < o.lanes; ++i)  // bitmask: partly defined bytes may cover only used bits
        if (lane_poisoned(o, i)) return true;
      return false;
    }
  return false;
}
OPKIT_EMU_RT void ApiCall::propagate_lanes() {
  // Poison of every source lane first: a write may overlap a source (in-place ops).
  std::vector<uint8_t> srcp[kMaxOperands];
  for (int k = 0; k < n_; ++k) {
    const Operand& o = ops_[k];
    if (o.write) continue;
    srcp[k].resize(o.lanes);
    for (uint32_t i = 0; i < o.lanes; ++i) srcp[k][i] = lane_poisoned(o, i);
  }
  std::vector<uint8_t> dp;
  for (int w = 0; w < n_; ++w) {
    const Operand& d = ops_[w];
    if (!d.write) continue;
    dp.assign(d.lanes, 0);
    for (int k = 0; k < n_; ++k) {  // dst lane i depends on source lanes [i*n/m, (i+1)*n/m)
      const Operand& s = ops_[k];
      if (s.write || !s.lanes) continue;
      for (uint64_t i = 0; i < d.lanes; ++i) {
        if (dp[i]) continue;
        uint64_t lo = i * s.lanes / d.lanes, hi = std::max(lo + 1, (i + 1) * s.lanes / d.lanes);
        for (uint64_t j = lo; j < hi && j < s.lanes; ++j)
          if (srcp[k][j]) { dp[i] = 1; break; }
      }
    }
    apply_lanes(d, dp);
  }
}
OPKIT_EMU_RT void ApiCall::apply_lanes(const Operand& d, const std::vector<uint8_t>& dp) {
  if (d.lane_bits == 1) {
    for (uint32_t b = 0; b * 8 < d.lanes; ++b) {
      uint8_t bits = defined_bits(d.off + b);
      for (uint32_t i = b * 8; i < d.lanes && i < b * 8 + 8; ++i)
        bits = dp[i] ? (bits & ~(1u << (i % 8))) : (bits | (1u << (i % 8)));
      set_defined_bits(d.off + b, bits);
    }
    return;
  }
  const uint32_t lb = d.lane_bits / 8;
  for (uint32_t i = 0; i < d.lanes;) {  // runs of equal poison inside one row
    uint32_t j = i + 1;
    const uint32_t row_end = (i / d.lanes_per_row() + 1) * d.lanes_per_row();
    while (j < d.lanes && j < row_end && dp[j] == dp[i]) ++j;
    shadow_fill(d.byte_of(i), (j - i) * lb, !dp[i]);
    i = j;
  }
}
[[noreturn]] OPKIT_EMU_RT void ApiCall::report_sink(const Operand& o) const {
  uint64_t i = 0;
  while (i < o.lanes && !lane_poisoned(o, i)) ++i;
  const uint32_t at = o.lane_bits == 1 ? o.off + static_cast<uint32_t>(i / 8) : o.byte_of(i);
  const char* why = "it was never written since its buffer was allocated, or was computed from UB that nothing wrote";
  if (pipe_ == Pipe::S)
    fail("ub-uninitialized", call_, loc_,
         strf("the element at UB offset %u is undefined: %s; the scalar unit would read garbage", at, why));
  fail("ub-uninitialized", call_, loc_,
       strf("%s: element %llu (UB offset %u) is undefined: %s; the NPU would write garbage to GM", o.name,
            (unsigned long long)(o.lane0 + i), at, why));
}
#endif

inline void scalar_access(const TensorMeta& t, uint32_t rel_off, uint32_t bytes, bool write, const char* call,
                          SrcLoc loc) {
  if (!ctx().checks) return;
  ApiCall c(Pipe::S, call, loc);
  if (write) c.write(t, rel_off, 1, bytes * 8, "tensor", kUnaligned);
  else c.read(t, rel_off, 1, bytes * 8, "tensor", kUnaligned | kSink);
  c.commit();
}

// The HardEvent whose SetFlag/WaitFlag pair orders pipe `from` before pipe `to`.
inline const char* order_event(int from, int to) {
  static const char* n[kPipes][kPipes] = {
      {"", "S_V", "S_MTE2", "S_MTE3"},
      {"V_S", "", "V_MTE2", "V_MTE3"},
      {"MTE2_S", "MTE2_V", "", "MTE2_MTE3"},
      {"MTE3_S", "MTE3_V", "MTE3_MTE2", ""},
  };
  return n[from][to];
}

#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void ApiCall::report_race(const Operand& o, const Race& r) const {
  const int p = static_cast<int>(pipe_);
  const char* ev = order_event(r.earlier_pipe, p);
  fail("pipe-race", call_, loc_,
       strf("%s %s UB offset %u on pipe %s, but %s at %s:%d %s it on pipe %s with nothing ordering the two "
            "(the pipes run in parallel on the NPU); order them with SetFlag<HardEvent::%s>/WaitFlag<HardEvent::%s>, "
            "a queue EnQue/DeQue, or PipeBarrier<PIPE_ALL>()",
            o.write ? "writes" : "reads", o.name, r.lo, pipe_name(p), r.earlier.call,
            r.earlier.file ? r.earlier.file : "<unknown>", r.earlier.line, r.earlier_write ? "wrote" : "read",
            pipe_name(r.earlier_pipe), ev, ev));
}
#endif

}  // namespace opkit_emu
