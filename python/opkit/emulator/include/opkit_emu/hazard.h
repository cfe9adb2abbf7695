// Pipe hazards (an off-device msSanitizer racecheck/synccheck). An AI Vector core runs four
// independent in-order pipes that touch UB: MTE2 (GM->UB copies), V (vector instructions and UB->UB
// copies), MTE3 (UB->GM copies) and S (scalar GetValue/SetValue). Between pipes nothing is ordered
// unless the kernel orders it: SetFlag/WaitFlag, queue EnQue/DeQue and FreeTensor/AllocTensor (which
// set and wait the queue's events), PipeBarrier<PIPE_ALL>. The emulator runs calls in program order,
// so it tracks, per pipe, a vector clock of what that pipe is known to wait for, and per UB range the
// last write and the last read on each pipe. An access that is not ordered after a conflicting access
// on another pipe is a `pipe-race`. All of this is per API call (a few range records), never per element.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "opkit_emu/diag.h"
#include "opkit_emu/types.h"

namespace opkit_emu {

enum class Pipe : uint8_t { S = 0, V, MTE2, MTE3 };
inline constexpr int kPipes = 4;
inline constexpr int kScalar = static_cast<int>(Pipe::S);
// CANN builds kernel-launch and custom-op projects with --cce-auto-sync=on: the bisheng compiler then inserts
// the syncs between PIPE_S (GetValue / SetValue / operator() on tensors) and PIPE_V, PIPE_MTE2, PIPE_MTE3, both
// ways (asc-devkit docs/zh/api/SIMD-API/基础API/同步控制/核内同步/关键特性说明.md, table 3; 技术附录/.../
// Scalar读写数据.md: no manual sync needed when auto-sync is on). MTE2/V/MTE3 among themselves stay the
// kernel's job (queues, flags). -DOPKIT_EMU_NO_AUTO_SYNC models a build with --cce-auto-sync=off.
#ifdef OPKIT_EMU_NO_AUTO_SYNC
inline constexpr bool kAutoSync = false;
#else
inline constexpr bool kAutoSync = true;
#endif
inline const char* pipe_name(int p) {
  static const char* n[] = {"S", "V", "MTE2", "MTE3"};
  return n[p];
}

// One pipe's knowledge: known[q] = every instruction of pipe q with sequence number <= known[q] has
// completed before this pipe's next instruction starts.
struct Clock {
  uint32_t known[kPipes] = {};
  void join(const Clock& o) {
    for (int q = 0; q < kPipes; ++q) known[q] = std::max(known[q], o.known[q]);
  }
};

// A past access: which call, where, and its sequence number on its pipe (0 = none).
struct Touch {
  uint32_t seq = 0;
  int32_t line = 0;
  const char* call = nullptr;
  const char* file = nullptr;
  uint8_t pipe = 0;
};

// A UB byte range [lo, hi) with a uniform access history. The accesses themselves live in the block's
// touch log (one entry per API call); a segment holds log indices (0 = none), so it is 28 bytes and
// splitting or merging segments moves little memory.
struct Seg {
  uint32_t lo, hi;
  uint32_t w;            // last write
  uint32_t r[kPipes];    // last read on each pipe since that write (S reads are never recorded)
};

struct Race {  // what pipe_access found: the earlier access the current one is not ordered after
  bool found = false;
  bool earlier_write = false;
  int earlier_pipe = 0;
  Touch earlier;
  uint32_t lo = 0;  // first conflicting UB byte
};

struct HazardState {
  uint32_t clk[kPipes] = {};  // instructions issued per pipe
  Clock pipe[kPipes];         // what each pipe waits for
  std::vector<Seg> segs;      // sorted, disjoint
  std::vector<Touch> log{Touch{}};  // log[0]: "no access"

  // A pipe hands over "everything I have done and everything I waited for" (SetFlag, EnQue, FreeTensor).
  Clock snapshot(int src) const {
    Clock c;
    snapshot_into(src, c);
    return c;
  }
  // The same, written in place: building the Clock on the stack (one 4-byte store, then a 16-byte copy)
  // stalls store forwarding on the queue calls of every tile.
  void snapshot_into(int src, Clock& out) const {
    out = pipe[src];
    out.known[src] = clk[src];
  }
  void wait(int dst, const Clock& c) { pipe[dst].join(c); }
  void barrier_all() {  // PipeBarrier<PIPE_ALL>: every pipe drains
    for (int p = 0; p < kPipes; ++p)
      for (int q = 0; q < kPipes; ++q) pipe[p].known[q] = clk[q];
  }
  // A new instruction on pipe p: its log index.
  uint32_t issue(int p, int32_t line, const char* call, const char* file) {
    if (log.size() >= kLogCompactAt) compact();
    log.push_back(Touch{++clk[p], line, call, file, static_cast<uint8_t>(p)});
    return static_cast<uint32_t>(log.size() - 1);
  }
  bool ordered(int p, int q, uint32_t seq) const {
    return p == q || seq == 0 || (kAutoSync && (p == kScalar || q == kScalar)) || pipe[p].known[q] >= seq;
  }

  // Forget the history of [lo, hi) (a fresh buffer from InitBuffer).
  void forget(uint32_t lo, uint32_t hi) {
    if (segs.empty() || lo >= hi) return;
    size_t i = cover(lo, hi), j = i;
    while (j < segs.size() && segs[j].lo < hi) ++j;
    segs.erase(segs.begin() + i, segs.begin() + j);
  }

  // Record an access of [lo, hi) on pipe p by the instruction at log index `me`; returns the first race
  // with an earlier access.
  Race access(uint32_t lo, uint32_t hi, int p, bool write, uint32_t me);

  // A scalar read (GetValue) of [lo, hi): never recorded, checked against the last write. The result, the
  // reported byte and the records left behind are those of access() + coalesce_scalar(lo) (split the
  // segment around the element, merge the pieces back and the neighbours at lo); inside one segment
  // (the usual case) without splitting anything.
  Race scalar_read(uint32_t lo, uint32_t hi, uint32_t me);

  // A scalar loop (GetValue/SetValue element by element) would leave one record per element: merge the
  // record at `off` with neighbours holding the same calls (scalar accesses keep the latest sequence).
  void coalesce_scalar(uint32_t off);

 private:
  static constexpr size_t kLogCompactAt = 1u << 16;
  static constexpr size_t kHint = 16;  // = 1 << (32 - 28)
  uint32_t hint_[kHint] = {};  // segment index of recently covered ranges, by lo (checked before use)

  bool same_touch(uint32_t ia, uint32_t ib, bool scalar) const {
    const Touch &a = log[ia], &b = log[ib];
    if (!a.seq || !b.seq) return !a.seq && !b.seq;
    return a.call == b.call && a.file == b.file && a.line == b.line && (scalar || a.seq == b.seq);
  }
  bool mergeable(const Seg& a, const Seg& b) const {
    if (a.hi != b.lo || log[a.w].pipe != log[b.w].pipe) return false;
    if (!same_touch(a.w, b.w, log[a.w].pipe == static_cast<uint8_t>(Pipe::S))) return false;
    for (int q = 0; q < kPipes; ++q)
      if (!same_touch(a.r[q], b.r[q], q == static_cast<int>(Pipe::S))) return false;
    return true;
  }
  void merge_into(size_t i) {  // segs[i] absorbs segs[i + 1]
    Seg& a = segs[i];
    const Seg& b = segs[i + 1];
    a.hi = b.hi;
    if (log[b.w].seq > log[a.w].seq) a.w = b.w;
    for (int q = 0; q < kPipes; ++q)
      if (log[b.r[q]].seq > log[a.r[q]].seq) a.r[q] = b.r[q];
    segs.erase(segs.begin() + i + 1);
  }
  // Keeps only the log entries segments still name (a long kernel issues millions of calls).
  void compact();
  // Makes [lo, hi) exactly covered by segments (splitting and filling gaps); returns the first one.
  // fast path: the range is exactly one existing segment (the steady state of a kernel's loop), and a
  // kernel keeps coming back to the same few ranges
  OPKIT_EMU_INLINE size_t cover(uint32_t lo, uint32_t hi) {
    uint32_t& h = hint_[((lo >> 5) * 2654435761u) >> 28];  // Fibonacci hash: row pitches spread out
    if (h < segs.size() && segs[h].lo == lo && segs[h].hi == hi) return h;
    return cover_slow(lo, hi, h);
  }
  __attribute__((noinline)) size_t cover_slow(uint32_t lo, uint32_t hi, uint32_t& h) {
    auto it = std::lower_bound(segs.begin(), segs.end(), lo, [](const Seg& s, uint32_t v) { return s.hi <= v; });
    size_t i = static_cast<size_t>(it - segs.begin());
    if (i < segs.size() && segs[i].lo == lo && segs[i].hi == hi) return h = static_cast<uint32_t>(i);
    if (i < segs.size() && segs[i].lo < lo) {  // split the segment straddling lo
      Seg right = segs[i];
      right.lo = lo;
      segs[i].hi = lo;
      segs.insert(segs.begin() + ++i, right);
    }
    uint32_t at = lo;
    size_t k = i;
    while (at < hi) {
      if (k < segs.size() && segs[k].lo == at) {
        if (segs[k].hi > hi) {  // split the segment straddling hi
          Seg right = segs[k];
          right.lo = hi;
          segs[k].hi = hi;
          segs.insert(segs.begin() + k + 1, right);
        }
        at = segs[k].hi;
        ++k;
      } else {  // a gap: nothing touched it yet
        uint32_t end = (k < segs.size() && segs[k].lo < hi) ? segs[k].lo : hi;
        segs.insert(segs.begin() + k, Seg{at, end, 0, {}});
        at = end;
        ++k;
      }
    }
    h = static_cast<uint32_t>(i);
    return i;
  }
};
#if OPKIT_EMU_RT_DEFS  // HazardState members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT Race HazardState::access(uint32_t lo, uint32_t hi, int p, bool write, uint32_t me) {
  Race race;
  if (lo >= hi) return race;
  size_t i = cover(lo, hi), j = i;
  for (; j < segs.size() && segs[j].lo < hi; ++j) {
    Seg& s = segs[j];
    if (!race.found) {
      const Touch& w = log[s.w];
      if (w.seq && !ordered(p, w.pipe, w.seq)) race = {true, true, w.pipe, w, s.lo};
      if (write && !race.found)
        for (int q = 0; q < kPipes; ++q) {
          const Touch& r = log[s.r[q]];
          if (r.seq && !ordered(p, q, r.seq)) { race = {true, false, q, r, s.lo}; break; }
        }
    }
    if (write) {
      s.w = me;
      for (uint32_t& t : s.r) t = 0;
    } else if (p != static_cast<int>(Pipe::S)) {
      // A scalar read completes before the scalar unit issues anything after it (its value is in a
      // register), so it never needs recording: no later write can overtake it.
      s.r[p] = me;
    }
  }
  if (write && j - i > 1) {  // identical histories now: keep one record
    segs[i].hi = segs[j - 1].hi;
    segs.erase(segs.begin() + i + 1, segs.begin() + j);
  }
  return race;
}
OPKIT_EMU_RT Race HazardState::scalar_read(uint32_t lo, uint32_t hi, uint32_t me) {
  const int p = static_cast<int>(Pipe::S);
  auto it = std::lower_bound(segs.begin(), segs.end(), lo, [](const Seg& s, uint32_t v) { return s.hi <= v; });
  const size_t i = static_cast<size_t>(it - segs.begin());
  if (lo >= hi || i >= segs.size() || segs[i].lo > lo || segs[i].hi < hi) {
    Race r = access(lo, hi, p, false, me);
    coalesce_scalar(lo);
    return r;
  }
  Race race;
  const Touch& w = log[segs[i].w];
  if (w.seq && !ordered(p, w.pipe, w.seq)) race = {true, true, w.pipe, w, lo};
  const bool at_start = segs[i].lo == lo;
  if (segs[i].hi == hi && i + 1 < segs.size() && mergeable(segs[i], segs[i + 1])) merge_into(i);
  if (at_start && i > 0 && mergeable(segs[i - 1], segs[i])) merge_into(i - 1);
  return race;
}
OPKIT_EMU_RT void HazardState::coalesce_scalar(uint32_t off) {
  auto it = std::lower_bound(segs.begin(), segs.end(), off, [](const Seg& s, uint32_t v) { return s.hi <= v; });
  size_t i = static_cast<size_t>(it - segs.begin());
  if (i >= segs.size()) return;
  if (i + 1 < segs.size() && mergeable(segs[i], segs[i + 1])) merge_into(i);
  if (i > 0 && mergeable(segs[i - 1], segs[i])) merge_into(i - 1);
}
OPKIT_EMU_RT void HazardState::compact() {
  std::vector<uint32_t> map(log.size(), 0);
  std::vector<Touch> kept{Touch{}};
  auto keep = [&](uint32_t& ix) {
    if (!ix) return;
    if (!map[ix]) { map[ix] = static_cast<uint32_t>(kept.size()); kept.push_back(log[ix]); }
    ix = map[ix];
  };
  for (Seg& s : segs) {
    keep(s.w);
    for (uint32_t& r : s.r) keep(r);
  }
  log.swap(kept);
}
#endif

}  // namespace opkit_emu
