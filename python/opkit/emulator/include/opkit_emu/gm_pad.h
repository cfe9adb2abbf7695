// Poison in GM padding (docs/emulator.md "Data extent"): the bytes of a GM argument's allocation past its data
// extent. Padding nobody wrote is garbage from a checked launch's start (gm_pad_begin: the device's allocators do not
// clear it); a UB->GM copy may land never-written UB bytes there too (sink_rows lets it). Both are remembered here,
// per byte, for the rest of the launch; a GM->UB load of them (a tensor list's load running from one member into the
// next too) leaves the UB bytes poison, so the garbage is caught if it reaches a tensor's data or a scalar
// (ub-uninitialized); a defined store or SetValue clears it. Cost: one relaxed atomic load per copy and GlobalTensor
// scalar access while no launch in the process has padding; then each launch running looks the region up, and only a
// copy or scalar access touching padding takes the (process-wide) lock and looks its bytes up. The functions are
// runtime (OPKIT_EMU_RT, config.h): compiled once in the runtime object for kernel modules, inline otherwise.
#pragma once
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "opkit_emu/api_call.h"
#include "opkit_emu/runtime.h"

namespace opkit_emu {

struct GmPadPoison {
  std::mutex mu;
  // per launch (its GM region list), per region: one byte per byte of [pad_begin, bytes), the poison halves of the
  // GM byte: 1 its low nibble, 2 its high one (an int4b_t element each: GlobalTensor<int4b_t>::SetValue writes
  // one), kPoison both
  std::map<const void*, std::map<const GmRegion*, std::vector<uint8_t>>> by_launch;
  std::atomic<int> live{0};  // launches with an entry in by_launch
  static constexpr uint8_t kPoison = 3;
  static GmPadPoison& get() { static GmPadPoison p; return p; }
  // The launch's table for region r, or null (no poison remembered there yet). Call with mu held.
  std::vector<uint8_t>* table(const void* launch, const GmRegion* r) {
    auto l = by_launch.find(launch);
    if (l == by_launch.end()) return nullptr;
    auto it = l->second.find(r);
    return it == l->second.end() ? nullptr : &it->second;
  }
};

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
// first padding byte found: the cheap test before a copy's or scalar access's byte walk and lock.
inline bool gm_pad_touches(const GmRegion& r, const uint8_t* g, uint32_t rows, uint32_t row_bytes,
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
  BlockCtx& c = ctx();
  const uint8_t* const table = r.pad_begin();  // the region's table starts there (a list: its first member's padding)
  const uint8_t* end = r.base + r.bytes;
  const bool atomic = c.atomic_dtype >= 0;
  GmPadPoison& p = GmPadPoison::get();
  std::unique_lock<std::mutex> lk(p.mu, std::defer_lock);
  std::vector<uint8_t>* bits = nullptr;  // the region's table, once looked up (or made: first poison)
  bool looked = false;
  for (uint32_t row = 0; row < rows; ++row) {
    const uint8_t* gr = g + row * gm_pitch;
    const uint32_t u = ub + row * ub_pitch;
    gm_pad_spans(r, gr, gr + row_bytes, [&](const uint8_t* from, const uint8_t* to) {
      for (const uint8_t* q = from; q < to; ++q) {
        const bool poison = !shadow_bit(u + static_cast<uint32_t>(q - gr));
        if (!bits) {
          if (!poison && (looked || p.live.load(std::memory_order_relaxed) == 0)) continue;  // nothing to clear
          if (!lk.owns_lock()) lk.lock();
          bits = p.table(c.gm, &r);
          looked = true;
          if (!bits) {
            if (!poison) continue;
            auto& launch = p.by_launch[c.gm];
            if (launch.empty()) p.live.fetch_add(1);
            bits = &launch.emplace(&r, std::vector<uint8_t>(static_cast<size_t>(end - table), 0)).first->second;
          }
        }
        uint8_t& b = (*bits)[static_cast<size_t>(q - table)];
        if (poison) b = GmPadPoison::kPoison;
        else if (!atomic) b = 0;
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
  if (!gm_pad_touches(*r, g, rows, row_bytes, gm_pitch)) return;
  std::lock_guard<std::mutex> lk(p.mu);
  const std::vector<uint8_t>* bits = p.table(c.gm, r);
  if (!bits) return;
  const uint8_t* const table = r->pad_begin();
  for (uint32_t row = 0; row < rows; ++row) {
    const uint8_t* gr = g + row * gm_pitch;
    gm_pad_spans(*r, gr, gr + row_bytes, [&](const uint8_t* from, const uint8_t* to) {
      for (const uint8_t* q = from; q < to; ++q)
        if ((*bits)[static_cast<size_t>(q - table)])
          shadow_clear(ub + row * ub_pitch + static_cast<uint32_t>(q - gr), 1);
    });
  }
}
#endif

// GlobalTensor::GetValue / SetValue of `bytes` at gm, or of one nibble of the byte at gm (int4b_t: nibble 0 low, 1
// high; -1: whole bytes). A read of padding garbage fails as the scalar read of poison UB does
// (LocalTensor::GetValue); a write clears what it writes -- an int4b_t element half of its byte, so a byte with one
// nibble written still loads as poison (the UB shadow is per byte) -- the scalar unit writes a defined value, and
// SetAtomicAdd applies to data copies to GM (asc-devkit 82b89a15
// docs/zh/api/SIMD-API/基础API/原子操作/SetAtomicAdd.md:31,89: UB / L0C / L1 -> GM on A2), not to it.
OPKIT_EMU_RT void gm_pad_scalar(const void* gm, uint32_t bytes, int nibble, bool write, const char* call, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_scalar(const void* gm, uint32_t bytes, int nibble, bool write, const char* call, SrcLoc loc) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.live.load(std::memory_order_relaxed) == 0) return;
  BlockCtx& c = ctx();
  if (!c.checks) return;
  const auto* g = static_cast<const uint8_t*>(gm);
  const GmRegion* r = gm_find(g);
  if (!r) return;
  // Most scalar accesses are in the data: they return here, without the process-wide lock, as gm_pad_load's do.
  // The region is this launch's and fixed while it runs, so reading its members needs no lock either.
  if (!gm_pad_touches(*r, g, 1, bytes, 0)) return;
  const uint8_t* bad = nullptr;
  const uint8_t half = nibble < 0 ? GmPadPoison::kPoison : static_cast<uint8_t>(1u << nibble);
  {
    std::lock_guard<std::mutex> lk(p.mu);
    std::vector<uint8_t>* bits = p.table(c.gm, r);
    if (!bits) return;
    const uint8_t* const table = r->pad_begin();
    gm_pad_spans(*r, g, g + bytes, [&](const uint8_t* from, const uint8_t* to) {
      for (const uint8_t* q = from; q < to; ++q) {
        uint8_t& b = (*bits)[static_cast<size_t>(q - table)];
        if (write) b = static_cast<uint8_t>(b & ~half);
        else if ((b & half) && !bad) bad = q;
      }
    });
  }
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

// A checked launch starts (run_blocks): every padding byte of its GM regions is garbage until something writes it.
// On the device a tensor's allocation past its data holds what the memory held before: aclrtMalloc does not clear
// (CANN's runtime API says so; aclrtMemset exists for that), and torch_npu's caching allocator hands a freed block to
// the next tensor as it is. So padding nobody wrote is poison from the start: a kernel may load it (an aligned copy
// of a ragged tail) and carry it element-wise back into padding, but using it -- in data, a reduction, a scalar
// read -- fails where it is used, as garbage written into padding does. A launch with no padding adds nothing.
OPKIT_EMU_RT void gm_pad_begin(const std::vector<GmRegion>& gm);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_begin(const std::vector<GmRegion>& gm) {
  std::map<const GmRegion*, std::vector<uint8_t>> tables;
  for (const GmRegion& r : gm) {
    const uint8_t* const table = r.pad_begin();
    const uint8_t* const end = r.base + r.bytes;
    if (table >= end) continue;  // all data: no padding
    std::vector<uint8_t> bits(static_cast<size_t>(end - table), 0);
    bool any = false;
    gm_pad_spans(r, table, end, [&](const uint8_t* from, const uint8_t* to) {  // a list: each member's padding only
      std::memset(bits.data() + (from - table), GmPadPoison::kPoison, static_cast<size_t>(to - from));
      any = true;
    });
    if (any) tables.emplace(&r, std::move(bits));
  }
  if (tables.empty()) return;
  GmPadPoison& p = GmPadPoison::get();
  std::lock_guard<std::mutex> lk(p.mu);
  auto& launch = p.by_launch[&gm];  // the launch's key, as ctx().gm points at it (gm_pad_store, gm_pad_release)
  if (launch.empty()) p.live.fetch_add(1);
  for (auto& t : tables) launch[t.first] = std::move(t.second);
}
#endif

// The launch is over (sync_all_release): its padding is forgotten.
OPKIT_EMU_RT void gm_pad_release(const void* launch);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void gm_pad_release(const void* launch) {
  GmPadPoison& p = GmPadPoison::get();
  if (p.live.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lk(p.mu);
  if (p.by_launch.erase(launch)) p.live.fetch_sub(1);
}
#endif

}  // namespace opkit_emu
