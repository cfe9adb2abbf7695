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
};

struct Seg {  // a UB byte range [lo, hi) with a uniform access history
  uint32_t lo, hi;
  uint8_t wpipe = 0;
  Touch w;            // last write
  Touch r[kPipes];    // last read on each pipe since that write
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
  uint32_t issue(int p) { return ++clk[p]; }
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

  // Record an access of [lo, hi) on pipe p (sequence seq); returns the first race with an earlier access.
  Race access(uint32_t lo, uint32_t hi, int p, bool write, const Touch& me) {
    Race race;
    if (lo >= hi) return race;
    size_t i = cover(lo, hi), j = i;
    for (; j < segs.size() && segs[j].lo < hi; ++j) {
      Seg& s = segs[j];
      if (!race.found) {
        if (s.w.seq && !ordered(p, s.wpipe, s.w.seq)) race = {true, true, s.wpipe, s.w, s.lo};
        if (write && !race.found)
          for (int q = 0; q < kPipes; ++q)
            if (s.r[q].seq && !ordered(p, q, s.r[q].seq)) { race = {true, false, q, s.r[q], s.lo}; break; }
      }
      if (write) {
        s.w = me;
        s.wpipe = static_cast<uint8_t>(p);
        for (Touch& t : s.r) t = Touch{};
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

  // A scalar loop (GetValue/SetValue element by element) would leave one record per element: merge the
  // record at `off` with neighbours holding the same calls (scalar accesses keep the latest sequence).
  void coalesce_scalar(uint32_t off) {
    auto it = std::lower_bound(segs.begin(), segs.end(), off, [](const Seg& s, uint32_t v) { return s.hi <= v; });
    size_t i = static_cast<size_t>(it - segs.begin());
    if (i >= segs.size()) return;
    if (i + 1 < segs.size() && mergeable(segs[i], segs[i + 1])) merge_into(i);
    if (i > 0 && mergeable(segs[i - 1], segs[i])) merge_into(i - 1);
  }

 private:
  static bool same_touch(const Touch& a, const Touch& b, bool scalar) {
    if (!a.seq || !b.seq) return !a.seq && !b.seq;
    return a.call == b.call && a.file == b.file && a.line == b.line && (scalar || a.seq == b.seq);
  }
  static bool mergeable(const Seg& a, const Seg& b) {
    if (a.hi != b.lo || a.wpipe != b.wpipe) return false;
    if (!same_touch(a.w, b.w, a.wpipe == static_cast<uint8_t>(Pipe::S))) return false;
    for (int q = 0; q < kPipes; ++q)
      if (!same_touch(a.r[q], b.r[q], q == static_cast<int>(Pipe::S))) return false;
    return true;
  }
  void merge_into(size_t i) {  // segs[i] absorbs segs[i + 1]
    Seg& a = segs[i];
    const Seg& b = segs[i + 1];
    a.hi = b.hi;
    if (b.w.seq > a.w.seq) a.w = b.w;
    for (int q = 0; q < kPipes; ++q)
      if (b.r[q].seq > a.r[q].seq) a.r[q] = b.r[q];
    segs.erase(segs.begin() + i + 1);
  }
  // Makes [lo, hi) exactly covered by segments (splitting and filling gaps); returns the first one.
  size_t cover(uint32_t lo, uint32_t hi) {
    auto it = std::lower_bound(segs.begin(), segs.end(), lo, [](const Seg& s, uint32_t v) { return s.hi <= v; });
    size_t i = static_cast<size_t>(it - segs.begin());
    // fast path: the range is exactly one existing segment (the steady state of a kernel's loop)
    if (i < segs.size() && segs[i].lo == lo && segs[i].hi == hi) return i;
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
        Seg g;
        g.lo = at;
        g.hi = end;
        segs.insert(segs.begin() + k, g);
        at = end;
        ++k;
      }
    }
    return i;
  }
};

}  // namespace opkit_emu
