// Poison in GM padding (docs/emulator.md "Data extent"): the bytes of a GM argument's allocation past its data
// extent. Padding nobody wrote is garbage from a checked launch's start (gm_pad_begin: the device's allocators do not
// clear it); a UB->GM copy may land never-written UB bytes there too (sink_rows lets it). Both are remembered here,
// per padding byte of each allocation (gm_pad_begin says for how long); a GM->UB load of them (a tensor list's load
// running from one member into the next too) leaves the UB bytes poison, so the garbage is caught if it reaches a
// tensor's data or a scalar (ub-uninitialized); a defined store or SetValue clears it. Cost: one relaxed atomic load
// per copy and GlobalTensor scalar access while no allocation in the process has padding; then each one looks the
// region up, and only a copy or scalar access touching padding takes the (process-wide) lock and looks its bytes up.
// The functions are runtime (OPKIT_EMU_RT, config.h): compiled once in the runtime object for kernel modules, inline
// otherwise.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "opkit_emu/api_call.h"
#include "opkit_emu/runtime.h"

namespace opkit_emu {

// One allocation's padding state: a table per padding span (gm_pad_spans: a lone tensor's [data end, end), a list
// member's [data end, allocation end)), one byte per padding byte -- the poison halves of the GM byte: 1 its low
// nibble, 2 its high one (an int4b_t element each: GlobalTensor<int4b_t>::SetValue writes one), kPoison both. So a
// tensor list's tables are as big as its members' padding, not the list.
struct GmPadAlloc {
  const uint8_t* base = nullptr;
  uint64_t bytes = 0, data = 0;
  std::vector<GmRegion::Member> members;
  struct Span { uint64_t off; std::vector<uint8_t> bits; };  // off: from the allocation's base
  std::vector<Span> spans;   // in offset order
  int users = 0;             // launches running over it (a nested one shares the outer one's state)
  bool kept = false;         // a GmAlloc / aclrtMalloc buffer: its state outlives the launch, until GmFree
  // An aclrtMalloc buffer's data [0, data): 1 for a byte nothing has written since aclrtMalloc (gm_data_begin),
  // garbage on the device as its padding is; empty for every other allocation (a kernel argument's data is its
  // caller's, all defined). unwritten_left counts the 1s, so a buffer all written costs nothing more.
  std::vector<uint8_t> unwritten;
  uint64_t unwritten_left = 0;
  bool same(const GmRegion& r) const {
    if (r.bytes != bytes || r.data != data || r.members.size() != members.size()) return false;
    for (size_t i = 0; i < members.size(); ++i)
      if (r.members[i].off != members[i].off || r.members[i].data != members[i].data ||
          r.members[i].alloc != members[i].alloc)
        return false;
    return true;
  }
  // The table byte of padding byte q of r (q inside one span: gm_pad_spans gives each span's bytes apart).
  uint8_t* at(const GmRegion& r, const uint8_t* q) {
    const uint64_t o = static_cast<uint64_t>(q - r.base);
    auto it = std::upper_bound(spans.begin(), spans.end(), o, [](uint64_t v, const Span& s) { return v < s.off; });
    return --it, it->bits.data() + (o - it->off);
  }
};

struct GmPadPoison {
  std::mutex mu;
  // per allocation (its base; several layouts of one base may coexist only while launches disagree on it)
  std::multimap<const uint8_t*, GmPadAlloc> by_alloc;
  std::map<const void*, std::vector<GmPadAlloc*>> by_launch;  // the allocations each running launch holds
  std::atomic<int> live{0};  // allocations in by_alloc
  std::atomic<int> unwritten_live{0};  // allocations with unwritten_left > 0: the gate of every data-byte lookup
  // Bumped (under mu) whenever a data byte's state may turn non-zero: a new aclrtMalloc buffer, a byte set back to
  // garbage (a device-to-device copy of garbage). A range a thread saw all written stays so until then
  // (gm_data_clean: its lookups skip the lock).
  std::atomic<uint64_t> data_gen{0};
  static constexpr uint8_t kPoison = 3;
  // What an aclrtMalloc buffer's host bytes hold until written: the device's garbage, stood in for by one byte value.
  // A byte nothing the runtime saw wrote but that no longer holds it was written through a raw __gm__ pointer (no
  // check sees those). Judged per aligned word of kRawWord bytes (gm_data_garbage): one changed byte defines its
  // word's never-written bytes, because a raw store of real data holds kGarbage in some byte often (0.8515625f is
  // 00 00 5A 3F; N random floats hold one with odds 1 - (255/256)^(4N)). A raw store of a whole word of kGarbage
  // bytes stays garbage (a false alarm only for that value), a raw store of part of a word defines the rest of the
  // word too (a miss, never a false alarm).
  static constexpr uint8_t kGarbage = 0x5A;
  static constexpr uint64_t kRawWord = 8;
  static GmPadPoison& get() { static GmPadPoison p; return p; }
  // The padding state of r's allocation, or null (r has no padding). Call with mu held.
  GmPadAlloc* table(const GmRegion& r) {
    for (auto it = by_alloc.lower_bound(r.base); it != by_alloc.end() && it->first == r.base; ++it)
      if (it->second.same(r)) return &it->second;
    return nullptr;
  }
};

// An aclrtMalloc buffer's never-written data (GmPadAlloc::unwritten): 1 nothing the runtime saw wrote the byte
// (garbage while it still holds kGarbage: a raw-pointer write changes it), 2 garbage whatever it holds (an atomic add
// landed on it: garbage plus a value). The allocation whose data holds q, or null. Call with mu held.
inline GmPadAlloc* gm_data_alloc(GmPadPoison& p, const uint8_t* q) {
  auto it = p.by_alloc.upper_bound(q);
  if (it == p.by_alloc.begin()) return nullptr;
  const uint8_t* base = (--it)->first;
  for (auto e = p.by_alloc.lower_bound(base); e != p.by_alloc.end() && e->first == base; ++e)
    if (q < base + e->second.unwritten.size()) return &e->second;
  return nullptr;
}
// Byte o is garbage: 2, or 1 with every never-written (1) byte of its aligned word still holding kGarbage (a raw
// write changes one: GmPadPoison::kRawWord). Bytes the runtime saw written (0) do not count either way.
inline bool gm_data_garbage(const GmPadAlloc& t, uint64_t o) {
  if (t.unwritten[o] != 1) return t.unwritten[o] == 2;
  const uint64_t w = o / GmPadPoison::kRawWord * GmPadPoison::kRawWord;
  const uint64_t e = std::min<uint64_t>(w + GmPadPoison::kRawWord, t.unwritten.size());
  for (uint64_t i = w; i < e; ++i)
    if (t.unwritten[i] == 1 && t.base[i] != GmPadPoison::kGarbage) return false;
  return true;
}
// Per thread, the last few ranges of aclrtMalloc data it found all written (state 0), with data_gen then: while
// data_gen has not moved they still are (a state goes back from 0 only with a bump), so a store into a buffer all
// written, a load of one, a spin loop on a written flag (ReadGmByPassDCache) skip the process-wide lock and lookup.
struct GmDataClean {
  const uint8_t* lo = nullptr;
  const uint8_t* hi = nullptr;
  uint64_t gen = ~uint64_t(0);
};
inline GmDataClean* gm_data_clean_ranges() {
  static thread_local GmDataClean c[4];
  return c;
}
inline bool gm_data_clean(const void* q, uint64_t n) {
  const uint64_t gen = GmPadPoison::get().data_gen.load(std::memory_order_acquire);
  const auto* a = static_cast<const uint8_t*>(q);
  const GmDataClean* c = gm_data_clean_ranges();
  for (int i = 0; i < 4; ++i)
    if (c[i].gen == gen && a >= c[i].lo && a + n <= c[i].hi) return true;
  return false;
}
// [lo, hi) is all written. Call with mu held (so data_gen is the one the states were read under).
inline void gm_data_note_clean(GmPadPoison& p, const uint8_t* lo, const uint8_t* hi) {
  static thread_local unsigned next = 0;
  gm_data_clean_ranges()[next++ % 4] = GmDataClean{lo, hi, p.data_gen.load(std::memory_order_relaxed)};
}
inline void gm_data_note_clean(GmPadPoison& p, const GmPadAlloc& t) {
  if (!t.unwritten_left) gm_data_note_clean(p, t.base, t.base + t.unwritten.size());
}

// Sets byte o's state (0 written, 1, 2), keeping unwritten_left and the process-wide gate in step. Call with mu held.
inline void gm_data_set(GmPadPoison& p, GmPadAlloc& t, uint64_t o, uint8_t v) {
  if (!t.unwritten[o] && v) p.data_gen.fetch_add(1, std::memory_order_release);
  if (!t.unwritten[o] == !v) {
    t.unwritten[o] = v;
    return;
  }
  t.unwritten[o] = v;
  if (v) {
    if (t.unwritten_left++ == 0) p.unwritten_live.fetch_add(1);
  } else if (--t.unwritten_left == 0) {
    p.unwritten_live.fetch_sub(1);
  }
}

// [q, q + n) of an aclrtMalloc buffer is written (an H2D copy, aclrtMemset, a kernel's plain store, SetValue,
// InitOutput): its data bytes there are no longer garbage. Any other memory: nothing to do. With `atomic` (a UB->GM
// copy under SetAtomicAdd & co.), bytes that are garbage stay garbage whatever the add leaves in them (2), and only
// those a raw-pointer write defined are written.
OPKIT_EMU_RT void gm_data_write(const void* q, uint64_t n, bool atomic = false);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_data_write(const void* q, uint64_t n, bool atomic) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.unwritten_live.load(std::memory_order_relaxed) == 0 || n == 0 || gm_data_clean(q, n)) return;
  std::lock_guard<std::mutex> lk(p.mu);
  const auto* b = static_cast<const uint8_t*>(q);
  GmPadAlloc* t = gm_data_alloc(p, b);
  if (!t) return;
  if (!t->unwritten_left) return gm_data_note_clean(p, *t);
  const uint64_t o = static_cast<uint64_t>(b - t->base), e = std::min<uint64_t>(o + n, t->unwritten.size());
  if (atomic) {  // judged before any is set: a byte set to 0 would drop out of its word's judgement (gm_data_garbage)
    std::vector<uint8_t> garbage(e > o ? e - o : 0);
    for (uint64_t i = o; i < e; ++i) garbage[i - o] = gm_data_garbage(*t, i);
    for (uint64_t i = o; i < e; ++i)
      if (t->unwritten[i]) gm_data_set(p, *t, i, garbage[i - o] ? 2 : 0);
    return;
  }
  for (uint64_t i = o; i < e; ++i)
    if (t->unwritten[i]) gm_data_set(p, *t, i, 0);
  gm_data_note_clean(p, *t);
}
#endif

// A device-to-device copy of n bytes (aclrtMemcpy & co., after the bytes moved): dst's data bytes become garbage
// where src's were, as the copy moves the device's garbage along (MemorySanitizer propagates the same way).
OPKIT_EMU_RT void gm_data_copy(void* dst, const void* src, uint64_t n);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_data_copy(void* dst, const void* src, uint64_t n) {
  GmPadPoison& p = GmPadPoison::get();
  // nothing tracked: src is all written and so is dst (review fid14 finding 7: this took the lock always)
  if (p.unwritten_live.load(std::memory_order_relaxed) == 0 || n == 0) return;
  std::lock_guard<std::mutex> lk(p.mu);
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<const uint8_t*>(dst);
  std::vector<uint8_t> state(n, 0);  // src's, read first: the ranges may overlap
  if (GmPadAlloc* ts = gm_data_alloc(p, s); ts && ts->unwritten_left) {
    const uint64_t o = static_cast<uint64_t>(s - ts->base), e = std::min<uint64_t>(o + n, ts->unwritten.size());
    for (uint64_t i = o; i < e; ++i) state[i - o] = gm_data_garbage(*ts, i) ? 2 : 0;  // its bytes moved: 2
  }
  GmPadAlloc* td = gm_data_alloc(p, d);
  if (!td) return;
  const uint64_t o = static_cast<uint64_t>(d - td->base), e = std::min<uint64_t>(o + n, td->unwritten.size());
  for (uint64_t i = o; i < e; ++i) gm_data_set(p, *td, i, state[i - o]);
}
#endif

// How many of [q, q + n) are an aclrtMalloc buffer's never-written garbage, and the first one's offset from q (a
// device-to-host copy of them hands the host garbage: acl_rt.h warns).
OPKIT_EMU_RT uint64_t gm_data_unwritten(const void* q, uint64_t n, uint64_t* first);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT uint64_t gm_data_unwritten(const void* q, uint64_t n, uint64_t* first) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.unwritten_live.load(std::memory_order_relaxed) == 0 || n == 0 || gm_data_clean(q, n)) return 0;
  std::lock_guard<std::mutex> lk(p.mu);
  const auto* b = static_cast<const uint8_t*>(q);
  GmPadAlloc* t = gm_data_alloc(p, b);
  if (!t || !t->unwritten_left) return 0;
  uint64_t count = 0;
  const uint64_t o = static_cast<uint64_t>(b - t->base), e = std::min<uint64_t>(o + n, t->unwritten.size());
  for (uint64_t i = o; i < e; ++i)
    if (gm_data_garbage(*t, i) && count++ == 0 && first) *first = i - o;
  return count;
}
#endif

// The padding bytes of r inside [a, b), as spans f(from, to): a lone tensor's [data end, end); a tensor list's, each
// member's own [data end, allocation end), so a copy running from one member into the next reaches each padding it
// covers (the list's descriptor words and the members' data are never padding). An f returning bool stops the walk
// by returning false.
template <class F> void gm_pad_spans(const GmRegion& r, const uint8_t* a, const uint8_t* b, F&& f) {
  const uint8_t* const end = r.base + r.bytes;
  if (b > end) b = end;  // a copy past it fails gm-bounds after this
  if (r.members.empty()) {
    const uint8_t* d = r.data_end();
    if (a < d) a = d;
    if (a < b) f(a, b);
    return;
  }
  for (const GmRegion::Member& m : r.members) {  // in offset order (the launch refuses overlaps)
    const uint8_t* s = r.base + m.off + m.data;
    if (s >= b) break;
    const uint8_t* e = r.base + m.off + m.alloc;
    if (e > b) e = b;
    if (s < a) s = a;
    if (s < e) {
      if constexpr (std::is_same<decltype(f(s, e)), bool>::value) {
        if (!f(s, e)) return;
      } else {
        f(s, e);
      }
    }
  }
}

// Whether `rows` rows of row_bytes, gm_pitch apart from g, touch any padding of r (gm_pad_spans), stopping at the
// first padding byte found: the cheap test before a copy's or scalar access's byte walk and lock. row_bytes is 64-bit:
// gm_pad_scalar's one row is InitOutput's whole fill, up to 2^32 - 1 elements of 8 bytes.
inline bool gm_pad_touches(const GmRegion& r, const uint8_t* g, uint32_t rows, uint64_t row_bytes,
                           uint64_t gm_pitch) {
  const uint8_t* const end = r.base + r.bytes;
  bool pad = false;
  for (uint32_t row = 0; row < rows && !pad; ++row) {
    const uint8_t* gr = g + row * gm_pitch;
    if (gr >= end) break;  // rows go up: this one and the rest are past the region
    gm_pad_spans(r, gr, gr + row_bytes, [&](const uint8_t*, const uint8_t*) {
      pad = true;
      return false;
    });
  }
  return pad;
}

// A UB->GM copy's rows: `rows` rows of row_bytes from absolute UB byte `ub`, ub_pitch apart, landing gm_pitch apart
// from `g` in region r. Called before the copy's commit (the shadow is the UB state the copy reads). Each padding
// byte it writes (gm_pad_spans: a tensor list's members' too, when the copy runs from one into the next) becomes
// poison if its UB byte is; a plain copy of a defined byte clears it, an atomic one does not (garbage plus a value
// is garbage).
OPKIT_EMU_RT void gm_pad_store(const GmRegion& r, const uint8_t* g, uint32_t ub, uint32_t rows, uint32_t row_bytes,
                         uint32_t ub_pitch, uint64_t gm_pitch);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_store(const GmRegion& r, const uint8_t* g, uint32_t ub, uint32_t rows, uint32_t row_bytes,
                         uint32_t ub_pitch, uint64_t gm_pitch) {
  const bool atomic = ctx().atomic_dtype >= 0;
  GmPadPoison& p = GmPadPoison::get();
  if (p.live.load(std::memory_order_relaxed) == 0) return;  // no padding anywhere (a checked launch's is there)
  std::lock_guard<std::mutex> lk(p.mu);
  GmPadAlloc* t = p.table(r);
  if (!t) return;  // r has no padding
  for (uint32_t row = 0; row < rows; ++row) {
    const uint8_t* gr = g + row * gm_pitch;
    const uint32_t u = ub + row * ub_pitch;
    gm_pad_spans(r, gr, gr + row_bytes, [&](const uint8_t* from, const uint8_t* to) {
      uint8_t* bits = t->at(r, from);
      for (const uint8_t* q = from; q < to; ++q, ++bits) {
        if (!shadow_bit(u + static_cast<uint32_t>(q - gr))) *bits = GmPadPoison::kPoison;
        else if (!atomic) *bits = 0;
      }
    });
  }
}
#endif

// A GM->UB load, after its commit marked the UB bytes defined: the ones loaded from poison padding go back to poison.
OPKIT_EMU_RT void gm_pad_load(uint32_t ub, uint32_t rows, uint32_t row_bytes, uint32_t ub_pitch, const void* gm,
                        uint64_t gm_pitch);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_load(uint32_t ub, uint32_t rows, uint32_t row_bytes, uint32_t ub_pitch, const void* gm,
                        uint64_t gm_pitch) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.live.load(std::memory_order_relaxed) == 0 || !rows || !row_bytes) return;
  BlockCtx& c = ctx();
  if (!c.checks) return;
  const auto* g = static_cast<const uint8_t*>(gm);
  const GmRegion* r = gm_find(g);
  if (!r) return;
  // The padding it reads: a lone tensor's, or each list member's it covers -- a load running from one member into
  // the next too, so garbage read that way is poison where it is used, as a lone tensor's is (sink_members lets
  // the same span be stored back). Loads inside the data return here, without the lock.
  // An aclrtMalloc buffer's data nothing wrote yet (run-asc) is garbage too, so a load of it is looked up as well.
  const bool data = r->arg < 0 && p.unwritten_live.load(std::memory_order_relaxed) && g < r->data_end() &&
                    !gm_data_clean(g, (rows - 1) * gm_pitch + row_bytes);
  if (!gm_pad_touches(*r, g, rows, row_bytes, gm_pitch) && !data) return;
  std::lock_guard<std::mutex> lk(p.mu);
  if (GmPadAlloc* t = p.table(*r)) {
    for (uint32_t row = 0; row < rows; ++row) {
      const uint8_t* gr = g + row * gm_pitch;
      gm_pad_spans(*r, gr, gr + row_bytes, [&](const uint8_t* from, const uint8_t* to) {
        const uint8_t* bits = t->at(*r, from);
        for (const uint8_t* q = from; q < to; ++q, ++bits)
          if (*bits) shadow_clear(ub + row * ub_pitch + static_cast<uint32_t>(q - gr), 1);
      });
    }
  }
  GmPadAlloc* u = data ? gm_data_alloc(p, g) : nullptr;
  if (!u) return;
  if (!u->unwritten_left) return gm_data_note_clean(p, *u);
  for (uint32_t row = 0; row < rows; ++row) {
    const uint64_t o = static_cast<uint64_t>(g + row * gm_pitch - u->base);
    const uint64_t e = std::min<uint64_t>(o + row_bytes, u->unwritten.size());
    for (uint64_t i = o; i < e; ++i)
      if (gm_data_garbage(*u, i)) shadow_clear(ub + row * ub_pitch + static_cast<uint32_t>(i - o), 1);
  }
}
#endif

// GlobalTensor::GetValue / SetValue of `bytes` at gm, or of one nibble of the byte at gm (int4b_t: nibble 0 low, 1
// high; -1: whole bytes). A read of padding garbage fails as the scalar read of poison UB does
// (LocalTensor::GetValue); a write clears what it writes -- an int4b_t element half of its byte, so a byte with one
// nibble written still loads as poison (the UB shadow is per byte) -- the scalar unit writes a defined value, and
// SetAtomicAdd applies to data copies to GM (asc-devkit 82b89a15
// docs/zh/api/SIMD-API/基础API/原子操作/SetAtomicAdd.md:31,89: UB / L0C / L1 -> GM on A2), not to it.
OPKIT_EMU_RT void gm_pad_scalar(const void* gm, size_t bytes, int nibble, bool write, const char* call, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_scalar(const void* gm, size_t bytes, int nibble, bool write, const char* call, SrcLoc loc) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.live.load(std::memory_order_relaxed) == 0) return;
  BlockCtx& c = ctx();
  if (!c.checks) return;
  const auto* g = static_cast<const uint8_t*>(gm);
  const GmRegion* r = gm_find(g);
  if (!r) return;
  // Most scalar accesses are in the data: they return here, without the process-wide lock, as gm_pad_load's do.
  // The region is this launch's and fixed while it runs, so reading its members needs no lock either. An aclrtMalloc
  // buffer's data nothing wrote yet is garbage too (gm_data_alloc).
  const bool data = r->arg < 0 && p.unwritten_live.load(std::memory_order_relaxed) && g < r->data_end() &&
                    !gm_data_clean(g, bytes);
  if (!gm_pad_touches(*r, g, 1, bytes, 0) && !data) return;
  const uint8_t* bad = nullptr;
  bool never_written = false;  // bad is in an aclrtMalloc buffer's data, not in padding
  const uint8_t half = nibble < 0 ? GmPadPoison::kPoison : static_cast<uint8_t>(1u << nibble);
  {
    std::lock_guard<std::mutex> lk(p.mu);
    if (GmPadAlloc* t = p.table(*r)) {
      gm_pad_spans(*r, g, g + bytes, [&](const uint8_t* from, const uint8_t* to) {
        uint8_t* bits = t->at(*r, from);
        for (const uint8_t* q = from; q < to; ++q, ++bits) {
          if (write) *bits = static_cast<uint8_t>(*bits & ~half);
          else if ((*bits & half) && !bad) bad = q;
        }
      });
    }
    // a data byte's state is per byte: an int4b_t SetValue defines its byte, whose other nibble the device left
    // as it was (garbage with the fill's bits: a read of that element still sees them, not flagged here)
    if (GmPadAlloc* u = data ? gm_data_alloc(p, g) : nullptr; u && u->unwritten_left) {
      const uint64_t o = static_cast<uint64_t>(g - u->base), e = std::min<uint64_t>(o + bytes, u->unwritten.size());
      bool clean = true;  // every byte written (0): the next access here skips the lock (a flag spun on)
      for (uint64_t i = o; i < e; ++i) {
        if (write) {
          if (u->unwritten[i]) gm_data_set(p, *u, i, 0);
        } else if (!bad && gm_data_garbage(*u, i)) {
          bad = u->base + i;
          never_written = true;
        }
        clean = clean && !u->unwritten[i];
      }
      if (clean && e > o) gm_data_note_clean(p, u->base + o, u->base + e);
    } else if (u) {
      gm_data_note_clean(p, *u);
    }
  }
  if (bad && never_written)
    fail("ub-uninitialized", call, loc,
         strf("GM byte %llu of an aclrtMalloc buffer is garbage: nothing has written it since aclrtMalloc (no "
              "aclrtMemset, host-to-device copy or kernel store; the device does not clear what it allocates, "
              "docs/emulator.md \"Data extent\"); the scalar unit would read it",
              static_cast<unsigned long long>(bad - r->base)));
  if (bad)
    fail("ub-uninitialized", call, loc,
         strf("GM byte %llu%s of %s is garbage: it is in the tensor's padding past its data, which nothing wrote "
              "(the device's allocator does not clear it) or a UB->GM copy landed unwritten UB in "
              "(docs/emulator.md \"Data extent\"); the scalar unit would read it",
              static_cast<unsigned long long>(bad - r->base),
              nibble < 0   ? ""
              : nibble > 0 ? " (its high nibble, an int4b_t element)"
                           : " (its low nibble, an int4b_t element)",
              r->arg >= 0 ? strf("kernel argument %d", r->arg).c_str() : "a GmAlloc buffer"));
}
#endif

// r's padding state, all garbage, added to p (null: r has no padding span). Call with mu held.
inline GmPadAlloc* gm_pad_add(GmPadPoison& p, const GmRegion& r) {
  GmPadAlloc fresh;
  gm_pad_spans(r, r.base, r.base + r.bytes, [&](const uint8_t* from, const uint8_t* to) {  // each padding span
    fresh.spans.push_back({static_cast<uint64_t>(from - r.base),
                           std::vector<uint8_t>(static_cast<size_t>(to - from), GmPadPoison::kPoison)});
  });
  if (fresh.spans.empty()) return nullptr;
  fresh.base = r.base;
  fresh.bytes = r.bytes;
  fresh.data = r.data;
  fresh.members = r.members;
  fresh.kept = r.arg < 0;
  GmPadAlloc* t = &p.by_alloc.emplace(r.base, std::move(fresh))->second;
  p.live.fetch_add(1);
  return t;
}

// aclrtMalloc (acl_rt.h): the new buffer r (a GmAlloc region with padding) holds garbage, its data too -- the device
// does not clear what it allocates -- until an H2D copy, aclrtMemset or a kernel's store writes it: from now on, not
// from its first launch as a kernel argument's padding (gm_pad_begin), since the program's own copies count. Its host
// bytes are filled with kGarbage first (gm_data_garbage relies on it).
OPKIT_EMU_RT void gm_data_begin(const GmRegion& r);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_data_begin(const GmRegion& r) {
  GmPadPoison& p = GmPadPoison::get();
  std::lock_guard<std::mutex> lk(p.mu);
  GmPadAlloc* t = gm_pad_add(p, r);
  if (!t) return;
  t->unwritten.assign(static_cast<size_t>(r.data_end() - r.base), 1);
  t->unwritten_left = t->unwritten.size();
  p.data_gen.fetch_add(1, std::memory_order_release);  // its bytes may be in a thread's clean ranges (a freed buffer)
  if (t->unwritten_left) p.unwritten_live.fetch_add(1);
}
#endif

// A checked launch starts (run_blocks): every padding byte of its GM regions is garbage until something writes it.
// On the device a tensor's allocation past its data holds what the memory held before: aclrtMalloc does not clear
// (CANN's runtime API says so; aclrtMemset exists for that), and torch_npu's caching allocator hands a freed block to
// the next tensor as it is. So padding nobody wrote is poison from the start: a kernel may load it (an aligned copy
// of a ragged tail) and carry it element-wise back into padding, but using it -- in data, a reduction, a scalar
// read -- fails where it is used, as garbage written into padding does. What a launch wrote into padding stays
// written as long as the allocation does: a GmAlloc / aclrtMalloc buffer's state (arg < 0: run-asc, ICPU_RUN_KF)
// is kept across launches until GmFree (gm_pad_forget); a launch running while another holds the same allocation (a
// nested launch) shares its state. A kernel argument's buffer is the caller's for this launch only (import-cann's
// are fresh per call, and nothing tells when a KernelModule.launch caller's buffer dies), so its padding starts
// garbage at each launch that is the only one holding it. A launch with no padding adds nothing.
OPKIT_EMU_RT void gm_pad_begin(const std::vector<GmRegion>& gm);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_begin(const std::vector<GmRegion>& gm) {
  GmPadPoison& p = GmPadPoison::get();
  std::vector<GmPadAlloc*> held;
  std::lock_guard<std::mutex> lk(p.mu);
  for (const GmRegion& r : gm) {
    if (r.pad_begin() >= r.base + r.bytes) continue;  // all data: no padding
    GmPadAlloc* t = p.table(r);
    if (!t && !(t = gm_pad_add(p, r))) continue;
    if (std::find(held.begin(), held.end(), t) != held.end()) continue;  // one region listed twice
    ++t->users;
    held.push_back(t);
  }
  if (!held.empty()) p.by_launch[&gm] = std::move(held);  // the launch's key, as sync_all_release gives it
}
#endif

// Drops allocation state nobody holds and nothing keeps. Call with mu held.
inline void gm_pad_drop_unheld(GmPadPoison& p, const uint8_t* base) {
  for (auto it = p.by_alloc.lower_bound(base); it != p.by_alloc.end() && it->first == base;) {
    if (it->second.users == 0 && !it->second.kept) {
      if (it->second.unwritten_left) p.unwritten_live.fetch_sub(1);
      it = p.by_alloc.erase(it);
      p.live.fetch_sub(1);
    } else {
      ++it;
    }
  }
}

// The launch is over (sync_all_release): the allocations it held are let go; a kernel argument's padding state goes
// with the last launch holding it, a GmAlloc buffer's stays (gm_pad_forget).
OPKIT_EMU_RT void gm_pad_release(const void* launch);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_release(const void* launch) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.live.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lk(p.mu);
  auto l = p.by_launch.find(launch);
  if (l == p.by_launch.end()) return;
  std::vector<const uint8_t*> bases;
  for (GmPadAlloc* t : l->second) {
    --t->users;
    bases.push_back(t->base);
  }
  p.by_launch.erase(l);
  for (const uint8_t* b : bases) gm_pad_drop_unheld(p, b);
}
#endif

// GmFree (aclrtFree): the allocation at base is gone, and with it what was written into its padding; the next
// allocation there starts garbage.
OPKIT_EMU_RT void gm_pad_forget(const void* base);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_forget(const void* base) {
  GmPadPoison& p = GmPadPoison::get();
  std::lock_guard<std::mutex> lk(p.mu);
  const auto* b = static_cast<const uint8_t*>(base);
  for (auto it = p.by_alloc.lower_bound(b); it != p.by_alloc.end() && it->first == b; ++it) it->second.kept = false;
  gm_pad_drop_unheld(p, b);
}
#endif

}  // namespace opkit_emu
