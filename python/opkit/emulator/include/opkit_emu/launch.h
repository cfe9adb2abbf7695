// Running a kernel: one BlockCtx (own UB + shadow) per block, blocks spread over host threads,
// results independent of the thread count (atomic GM writes are applied in block order: after all blocks,
// or at a completed SyncAll / GroupBarrier round). Also: the module ABI and CANN's CPU-debug entry points (ICPU_RUN_KF).
#pragma once
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "opkit/launch_abi.h"
#include "opkit_emu/sync.h"
#include "opkit_emu/datacopy.h"
#include "opkit_emu/sync_all.h"
#include "opkit_emu/tiling_macros.h"

namespace opkit_emu {

struct LaunchStats {
  BlockStats total;
  uint64_t ub_high_water = 0, max_block_gm_bytes = 0, max_block_vector_repeats = 0;
  uint32_t blocks = 0;
  std::vector<BlockStats> per_block;
};

struct LaunchOutcome {
  int status = 0;  // 0 ok, 1 rule violation, 2 other error
  std::unique_ptr<Violation> violation;
  std::string error;
  LaunchStats stats;
};

// After the kernel returns: queue leaks and unwaited SetFlags are violations too.
OPKIT_EMU_RT void end_of_kernel_checks(BlockCtx& c);
OPKIT_EMU_RT uint32_t default_threads(uint32_t block_dim, uint64_t gm_bytes);
OPKIT_EMU_RT_LAUNCH LaunchOutcome run_blocks_fn(uint32_t block_dim, uint64_t tiling_key, uint32_t threads,
                                         const std::vector<GmRegion>& gm, void (*body)(const void*), const void* arg,
                                         uint32_t flags);
#if OPKIT_EMU_RT_DEFS  // OPKIT_EMU_RT (config.h): end_of_kernel_checks, default_threads, run_blocks_fn
// the launch's own state (run_blocks_fn, WorkerPool below): only the runtime object / header-only compile it
struct UbMemory {  // one per host worker, reused across the blocks it runs
  uint8_t* ub;
  uint64_t* shadow;
  UbMemory() {
    ub = static_cast<uint8_t*>(std::aligned_alloc(64, kChip.ub_total_bytes));
    shadow = static_cast<uint64_t*>(std::aligned_alloc(64, kChip.ub_total_bytes / 8));
    if (!ub || !shadow) throw std::bad_alloc();
  }
  ~UbMemory() { std::free(ub); std::free(shadow); }
  UbMemory(const UbMemory&) = delete;
  UbMemory& operator=(const UbMemory&) = delete;
};

OPKIT_EMU_RT void end_of_kernel_checks(BlockCtx& c) {
  if (!c.deferred.empty()) throw c.deferred.front();
  for (const BufRec& b : c.bufs)
    if (b.pipe > 0 && (b.state == BufState::Allocated || b.state == BufState::Queued || b.state == BufState::Dequeued))
      c.fail("queue-protocol", "TQue::AllocTensor", b.alloc_loc,
             strf("tensor allocated here (UB offset %u) is still %s when the kernel ends; FreeTensor it", b.off,
                  b.state == BufState::Queued ? "in its queue" : "allocated"));
  c.flags.each([&](int e, int id, const FlagRec& f) {
    if (f.count > 0)
      c.fail("sync-pairing", "SetFlag", f.last_set,
             strf("SetFlag<HardEvent::%s>(%d) was never matched by a WaitFlag before the kernel ended",
                  event_name(static_cast<AscendC::HardEvent>(e)), id));
  });
}

// Below this much GM traffic a launch runs its blocks on the calling thread: starting host threads
// (tens of microseconds) would cost more than the blocks themselves. Results never depend on it.
inline constexpr uint64_t kInlineLaunchBytes = 256 * 1024;

OPKIT_EMU_RT uint32_t default_threads(uint32_t block_dim, uint64_t gm_bytes) {
  const char* e = std::getenv("OPKIT_EMU_THREADS");   // read per launch: a caller may change it between launches
  if (gm_bytes < kInlineLaunchBytes && !e) return 1;
  int v = e ? std::atoi(e) : 0;
  // glibc answers hardware_concurrency by opening and reading /sys/devices/system/cpu/online: ~3 us of syscalls,
  // a tenth of a small launch: asked once per process
  static const uint32_t hw = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, std::min(block_dim, v > 0 ? static_cast<uint32_t>(v) : hw));
}

// Host threads that run blocks, started on the first launch that wants them and kept for the next ones
// (starting threads and mapping their UB on every launch costs more than a small launch itself). Each
// worker keeps its UB for its lifetime: InitBuffer poisons what a kernel takes, so nothing leaks from one
// launch to the next. One launch at a time uses the pool; a launch that finds it busy (another host
// thread launching) runs its blocks on its own thread. After a fork the child starts a pool of its own.
// Internal linkage: one pool per module, and nothing of it (std::thread's code for its lambda) exported.
namespace {
class WorkerPool {
 public:
  static WorkerPool& get() {
    static WorkerPool p;
    if (p.pid_ != getpid()) p.after_fork();
    return p;
  }
  ~WorkerPool() {  // the module is unloaded (dlclose) or the process ends: stop and join the workers
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs job() on `helpers` pool threads and on the calling thread; returns when all have returned.
  // False (nothing run) when another launch holds the pool.
  bool run(uint32_t helpers, const std::function<void()>& job) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      while (threads_.size() < helpers) threads_.emplace_back([this] { loop(); });
      job_ = &job;
      want_ = helpers;
      taken_ = finished_ = 0;
      ++generation_;
    }
    cv_.notify_all();
    job();
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [&] { return finished_ == want_; });
    job_ = nullptr;
    return true;
  }

 private:
  WorkerPool() : pid_(getpid()) {}
  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return stop_ || (generation_ != seen && taken_ < want_); });
      if (stop_) return;
      seen = generation_;
      ++taken_;
      const std::function<void()>* job = job_;
      lk.unlock();
      (*job)();
      lk.lock();
      if (++finished_ == want_) done_.notify_one();
    }
  }
  void after_fork() {  // the parent's threads do not exist here: forget them without joining
    new std::vector<std::thread>(std::move(threads_));  // never destroyed (a joinable std::thread would abort)
    threads_.clear();
    new (&mu_) std::mutex;
    new (&busy_) std::mutex;
    new (&cv_) std::condition_variable;
    new (&done_) std::condition_variable;
    job_ = nullptr;
    want_ = taken_ = finished_ = 0;
    pid_ = getpid();
  }
  std::mutex busy_, mu_;
  std::condition_variable cv_, done_;
  std::vector<std::thread> threads_;
  const std::function<void()>* job_ = nullptr;
  uint64_t generation_ = 0;
  uint32_t want_ = 0, taken_ = 0, finished_ = 0;
  bool stop_ = false;
  pid_t pid_;
};
}  // namespace

// Runs body(arg) once per block with that block's context installed. Never throws. Not a template (run_blocks
// below adapts a callable), so it is compiled once (OPKIT_EMU_RT), not in every kernel module.
OPKIT_EMU_RT_LAUNCH LaunchOutcome run_blocks_fn(uint32_t block_dim, uint64_t tiling_key, uint32_t threads,
                                         const std::vector<GmRegion>& gm, void (*body)(const void*), const void* arg,
                                         uint32_t flags) {
  const bool checks = !(flags & OPKIT_LAUNCH_FAST);
  const int fill = checks ? 0xff : (flags & OPKIT_LAUNCH_ALT_FILL) ? 0x5a : -1;
  LaunchOutcome out;
  if (block_dim == 0) {
    out.status = 2;
    out.error = "block_dim is 0";
    return out;
  }
  struct BlockResult {
    std::unique_ptr<Violation> v;
    std::string err;
    bool failed = false;
    bool aborted = false;  // stopped at a SyncAll because another block failed: not the error to report
    BlockStats stats;
    std::vector<AtomicRecord> atomics;
  };
  std::vector<BlockResult> res(block_dim);
  std::atomic<uint32_t> next{0};
  // Every thread that runs blocks (the caller, pool workers) keeps its UB between launches (a fresh 192 KB
  // mapping per call is page faults); InitBuffer poisons what a kernel takes, so nothing leaks from one
  // launch to the next. Threads started for one SyncAll launch free theirs when they end.
  static thread_local std::unique_ptr<UbMemory> t_mem;
  auto worker = [&]() {
    UbMemory* mem = nullptr;
    std::unique_ptr<UbMemory> nested_mem;  // a nested launch (below) must not overwrite the outer block's UB
    try {
      if (t_ctx) {
        nested_mem = std::make_unique<UbMemory>();
        mem = nested_mem.get();
      } else {
        if (!t_mem) t_mem = std::make_unique<UbMemory>();
        mem = t_mem.get();
      }
    } catch (...) {
      for (uint32_t b; (b = next.fetch_add(1)) < block_dim;) { res[b].failed = true; res[b].err = "out of host memory for UB"; }
      return;
    }
    // The thread's block context, reused block after block (reset_block: fresh fields, kept capacity). It is
    // this thread's alone: t_ctx points at it only while one of its blocks runs.
    static thread_local BlockCtx t_block;
    // A launch from inside a block on this thread (a nested launch) must not wipe that block's context: it gets
    // its own, and the outer block's t_ctx is restored after each of its blocks.
    BlockCtx* const outer = t_ctx;
    std::unique_ptr<BlockCtx> nested;
    if (outer) {
      try {
        nested = std::make_unique<BlockCtx>();
      } catch (...) {
        for (uint32_t b; (b = next.fetch_add(1)) < block_dim;) { res[b].failed = true; res[b].err = "out of host memory for a nested launch's block context"; }
        return;
      }
    }
    for (uint32_t b; (b = next.fetch_add(1)) < block_dim;) {
      BlockCtx& c = outer ? *nested : t_block;
      reset_block(c);
      c.idx = b;
      c.num = block_dim;
      c.tiling_key = tiling_key;
      c.ub = mem->ub;
      c.shadow = mem->shadow;
      c.gm = &gm;
      c.checks = checks;
      c.ub_fill = fill;
      if (c.bufs.capacity() < 32) c.bufs.reserve(32);  // most kernels' count: no regrowth in the first block
      t_ctx = &c;
      try {
        body(arg);
        if (checks) end_of_kernel_checks(c);
        sync_all_block_done(c, true);
      } catch (const SyncAllAborted&) {
        res[b].failed = res[b].aborted = true;
        sync_all_block_done(c, false);
      } catch (const Violation& v) {
        res[b].failed = true;
        res[b].v = std::make_unique<Violation>(v);
        sync_all_block_done(c, false);
      } catch (const std::exception& e) {
        res[b].failed = true;
        res[b].err = e.what();
      } catch (...) {
        res[b].failed = true;
        res[b].err = "unknown C++ exception";
      }
      if (res[b].failed && !res[b].aborted && !res[b].v) sync_all_block_done(c, false);
      t_ctx = outer;
      res[b].stats = c.stats;
      res[b].atomics = std::move(c.atomics);
      trim_block(c);
    }
  };
  if (checks) gm_pad_begin(gm);  // padding nobody wrote is garbage (gm_pad.h); a fast launch tracks no poison
  uint64_t gm_bytes = 0;
  for (const GmRegion& r : gm) gm_bytes += r.bytes;
  uint32_t nt = threads ? std::min(threads, block_dim) : default_threads(block_dim, gm_bytes);
  if (kernel_uses_sync_all()) {  // a SyncAll barrier needs every block alive at once: a thread per block
    std::vector<std::thread> own;
    for (uint32_t i = 1; i < block_dim; ++i) own.emplace_back(worker);
    worker();
    for (auto& t : own) t.join();
  } else if (nt <= 1 || !WorkerPool::get().run(nt - 1, worker)) {
    worker();
  }
  sync_all_release(&gm);
  // Deterministic outcome: the lowest failing block is reported.
  for (uint32_t b = 0; b < block_dim; ++b) {
    if (!res[b].failed || res[b].aborted) continue;
    if (res[b].v) { out.status = 1; out.violation = std::move(res[b].v); }
    else { out.status = 2; out.error = "block " + std::to_string(b) + ": " + res[b].err; }
    break;
  }
  if (out.status == 0)
    for (uint32_t b = 0; b < block_dim; ++b)
      for (const AtomicRecord& r : res[b].atomics) atomic_apply(r);
  LaunchStats& s = out.stats;
  s.blocks = block_dim;
  s.per_block.reserve(block_dim);
  for (uint32_t b = 0; b < block_dim; ++b) {
    const BlockStats& x = res[b].stats;
    s.total.gm_read_bytes += x.gm_read_bytes;
    s.total.gm_write_bytes += x.gm_write_bytes;
    s.total.vector_elems += x.vector_elems;
    s.total.vector_repeats += x.vector_repeats;
    for (int k = 0; k < static_cast<int>(VecOp::Count_); ++k) {
      s.total.op_elems[k] += x.op_elems[k];
      s.total.op_calls[k] += x.op_calls[k];
    }
    s.ub_high_water = std::max(s.ub_high_water, x.ub_high_water);
    s.max_block_gm_bytes = std::max(s.max_block_gm_bytes, x.gm_read_bytes + x.gm_write_bytes);
    s.max_block_vector_repeats = std::max(s.max_block_vector_repeats, x.vector_repeats);
    s.per_block.push_back(x);
  }
  s.total.ub_high_water = s.ub_high_water;
  return out;
}
#endif  // OPKIT_EMU_RT_DEFS

// Runs body() once per block with that block's context installed. Never throws.
template <class Body>
LaunchOutcome run_blocks(uint32_t block_dim, uint64_t tiling_key, uint32_t threads, const std::vector<GmRegion>& gm,
                         const Body& body, uint32_t flags = 0) {
  return run_blocks_fn(block_dim, tiling_key, threads, gm, [](const void* b) { (*static_cast<const Body*>(b))(); },
                       &body, flags);
}

// ---- the module ABI (python/opkit/include/opkit/launch_abi.h) ----------------------------------
inline void copy_str(char* dst, size_t cap, const std::string& s) { std::snprintf(dst, cap, "%s", s.c_str()); }

template <class F, size_t... I>
void invoke_gm(F f, void* const* a, std::index_sequence<I...>) {
  f(static_cast<uint8_t*>(a[I])...);
}

// Tensor-list members for the next launch on this thread (opkit_kernel_set_list_members): per GM argument, its
// members' (offset, data bytes, allocation bytes). The launch takes them into its regions and clears them.
OPKIT_EMU_RT std::vector<std::vector<GmRegion::Member>>& pending_list_members();
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT std::vector<std::vector<GmRegion::Member>>& pending_list_members() {
  static thread_local std::vector<std::vector<GmRegion::Member>> m;
  return m;
}
#endif
OPKIT_EMU_RT int32_t set_list_members(uint32_t arg, uint32_t n, const uint64_t* triples);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT int32_t set_list_members(uint32_t arg, uint32_t n, const uint64_t* triples) {
  if (arg >= OPKIT_MAX_GM_ARGS || (n && !triples)) return 2;
  auto& p = pending_list_members();
  if (p.size() <= arg) p.resize(arg + 1);
  p[arg].clear();
  for (uint32_t i = 0; i < n; ++i) p[arg].push_back({triples[3 * i], triples[3 * i + 1], triples[3 * i + 2]});
  return 0;
}
#endif

// The thread's last launch's GmRegion::marks (opkit_kernel_last_marks): [0] written, [1] padding touched; all ones
// (unknown) until a launch has run through, or after a refused one.
OPKIT_EMU_RT uint64_t* last_marks();
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT uint64_t* last_marks() {
  static thread_local uint64_t m[2] = {~uint64_t(0), ~uint64_t(0)};
  return m;
}
#endif
OPKIT_EMU_RT int32_t get_last_marks(uint64_t* written, uint64_t* pad_touched);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT int32_t get_last_marks(uint64_t* written, uint64_t* pad_touched) {
  if (!written || !pad_touched) return 2;
  *written = last_marks()[0];
  *pad_touched = last_marks()[1];
  return 0;
}
#endif

// The launch ABI's entry for a kernel of n GM arguments: invoke(fn, args) calls the kernel. Not a template
// (module_launch below adapts the kernel), so it is compiled once (OPKIT_EMU_RT), not in every kernel module.
OPKIT_EMU_RT_LAUNCH int32_t module_launch_fn(const opkit_launch_args* a, opkit_launch_result* r, const char* entry, size_t n,
                                      void (*invoke)(const void* fn, void* const* args), const void* fn);
#if OPKIT_EMU_RT_DEFS  // OPKIT_EMU_RT (config.h): fill_stats, fill_result, module_launch_fn
inline void fill_stats(opkit_launch_stats& d, const LaunchStats& s) {
  d.gm_read_bytes = s.total.gm_read_bytes;
  d.gm_write_bytes = s.total.gm_write_bytes;
  d.vector_elems = s.total.vector_elems;
  d.vector_repeats = s.total.vector_repeats;
  d.ub_high_water = s.ub_high_water;
  d.max_block_gm_bytes = s.max_block_gm_bytes;
  d.max_block_vector_repeats = s.max_block_vector_repeats;
  d.blocks = s.blocks;
}

inline void fill_result(opkit_launch_result* r, const LaunchOutcome& o) {
  r->status = o.status;
  r->line = 0;
  r->block = -1;
  if (o.status == 1) {
    const Violation& v = *o.violation;
    copy_str(r->rule, sizeof r->rule, v.rule);
    copy_str(r->call, sizeof r->call, v.call);
    copy_str(r->file, sizeof r->file, v.file);
    r->line = v.line;
    r->block = v.block;
    copy_str(r->message, sizeof r->message, v.msg);
  } else if (o.status == 2) {
    copy_str(r->message, sizeof r->message, "opkit emulator: kernel failed: " + o.error);
  }
  fill_stats(r->stats, o.stats);
}

OPKIT_EMU_RT_LAUNCH int32_t module_launch_fn(const opkit_launch_args* a, opkit_launch_result* r, const char* entry, size_t n,
                                      void (*invoke)(const void* fn, void* const* args), const void* fn) {
  // every launch consumes the pending members, refused or not: left pending, they would apply to the thread's
  // next launch (of any module, with the runtime object) and hide its ub-uninitialized
  std::vector<std::vector<GmRegion::Member>> members;
  members.swap(pending_list_members());
  last_marks()[0] = last_marks()[1] = ~uint64_t(0);  // unknown unless the launch runs
  if (!r) return 2;
  std::memset(r, 0, sizeof *r);
  r->block = -1;
  try {
    if (!a || a->abi_version != OPKIT_LAUNCH_ABI_VERSION) {
      r->status = 2;
      copy_str(r->message, sizeof r->message,
               strf("opkit emulator: launch ABI version mismatch (caller %u, kernel %s %u): the kernel module was "
                    "built by another opkit; run `opkit build` again", a ? a->abi_version : 0u, entry,
                    OPKIT_LAUNCH_ABI_VERSION));
      return 2;
    }
    if (a->num_args != n) {
      r->status = 2;
      copy_str(r->message, sizeof r->message,
               strf("opkit emulator: kernel %s takes %zu GM arguments, launch passed %u", entry, n, a->num_args));
      return 2;
    }
    std::vector<GmRegion> gm;
    gm.reserve(a->num_args);  // one allocation, not one per doubling
    for (uint32_t i = 0; i < a->num_args; ++i) {
      if (a->arg_data_bytes[i] > a->arg_bytes[i]) {
        r->status = 2;
        copy_str(r->message, sizeof r->message,
                 strf("opkit emulator: kernel %s GM argument %u: arg_data_bytes %llu is past its arg_bytes %llu (the "
                      "data extent lies inside the allocation)", entry, i, (unsigned long long)a->arg_data_bytes[i],
                      (unsigned long long)a->arg_bytes[i]));
        return 2;
      }
      if (a->args[i] && a->arg_bytes[i])
        gm.push_back({static_cast<const uint8_t*>(a->args[i]), a->arg_bytes[i], static_cast<int>(i),
                      a->arg_data_bytes[i] ? a->arg_data_bytes[i] : a->arg_bytes[i]});
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].empty()) continue;
      GmRegion* g = nullptr;
      for (GmRegion& x : gm) if (x.arg == static_cast<int>(i)) g = &x;
      uint64_t prev = 0;
      for (const GmRegion::Member& m : members[i])
        // m.off + m.alloc > g->bytes could wrap past 2^64 and accept a member outside the buffer
        if (!g || m.off < prev || m.data > m.alloc || m.alloc > g->bytes || m.off > g->bytes - m.alloc) {
          r->status = 2;
          copy_str(r->message, sizeof r->message,
                   strf("opkit emulator: kernel %s GM argument %zu: tensor-list member (offset %llu, data %llu, "
                        "allocation %llu) is not inside the buffer (%llu bytes) after the one before it", entry, i,
                        (unsigned long long)m.off, (unsigned long long)m.data, (unsigned long long)m.alloc,
                        (unsigned long long)(g ? g->bytes : 0)));
          return 2;
        } else {
          prev = m.off + m.alloc;
        }
      g->members = std::move(members[i]);
    }
    std::atomic<uint64_t> marks[2] = {{0}, {0}};
    for (GmRegion& g : gm) g.marks = marks;
    void* const* args = a->args;
    LaunchOutcome o = run_blocks(a->block_dim, a->tiling_key, a->threads, gm,
                                 [&]() { invoke(fn, args); },
                                 a->flags);
    fill_result(r, o);
    if (!(a->flags & OPKIT_LAUNCH_FAST)) {  // a fast launch records nothing (gm_mark_write, gm_check skip it)
      last_marks()[0] = marks[0].load();
      last_marks()[1] = marks[1].load();
    }
    return r->status;
  } catch (const std::exception& e) {
    r->status = 2;
    copy_str(r->message, sizeof r->message, std::string("opkit emulator: ") + e.what());
    return 2;
  } catch (...) {
    r->status = 2;
    copy_str(r->message, sizeof r->message, "opkit emulator: unknown C++ exception");
    return 2;
  }
}
#endif  // OPKIT_EMU_RT_DEFS

// The kernel's side of module_launch_fn; Tag (an anonymous-namespace type) gives the instantiation internal
// linkage, so dtype variants of one kernel never export colliding weak symbols.
template <size_t N, class Tag, class F>
int32_t module_launch(const opkit_launch_args* a, opkit_launch_result* r, const char* entry, F f) {
  return module_launch_fn(a, r, entry, N, [](const void* fn, void* const* args) {
    (void)sizeof(Tag);
    invoke_gm(*static_cast<const F*>(fn), args, std::make_index_sequence<N>{});
  }, &f);
}

// ---- tiling ----------------------------------------------------------------------------------
inline void load_tiling(void* dst, size_t bytes, const void* tiling, SrcLoc loc) {
  gm_check(tiling, bytes, "GET_TILING_DATA", loc, "tiling");
  if (!tiling) fail("gm-bounds", "GET_TILING_DATA", loc, "tiling pointer is null");
  ctx().stats.gm_read_bytes += bytes;
  std::memcpy(dst, tiling, bytes);
}

// ---- CANN CPU-debug entry points (tikicpulib.h) ----------------------------------------------
struct GmAllocRegistry {
  std::mutex mu;
  std::vector<GmRegion> regions;
  static GmAllocRegistry& get() { static GmAllocRegistry r; return r; }
};
inline uint64_t& icpu_tiling_key() { static uint64_t k = 0; return k; }
inline LaunchStats& last_stats() { static thread_local LaunchStats s; return s; }

template <class F>
void icpu_run(const char* name, uint32_t block_dim, const F& f) {
  std::vector<GmRegion> gm;
  {
    auto& reg = GmAllocRegistry::get();
    std::lock_guard<std::mutex> lk(reg.mu);
    gm = reg.regions;
  }
  LaunchOutcome o = run_blocks(block_dim, icpu_tiling_key(), 0, gm, f);
  last_stats() = o.stats;
  if (o.status == 1) {
    std::fprintf(stderr, "%s\n", o.violation->what());
    std::fflush(stderr);
    std::exit(1);
  }
  if (o.status == 2) {
    std::fprintf(stderr, "opkit emulator: kernel %s failed: %s\n", name, o.error.c_str());
    std::fflush(stderr);
    std::exit(2);
  }
  if (std::getenv("OPKIT_EMU_STATS"))
    std::fprintf(stderr,
                 "opkit emulator: %s: %u blocks, GM read %llu B, GM write %llu B, vector elems %llu, repeats %llu, "
                 "UB high water %llu B\n",
                 name, o.stats.blocks, (unsigned long long)o.stats.total.gm_read_bytes,
                 (unsigned long long)o.stats.total.gm_write_bytes, (unsigned long long)o.stats.total.vector_elems,
                 (unsigned long long)o.stats.total.vector_repeats, (unsigned long long)o.stats.ub_high_water);
}

}  // namespace opkit_emu

enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_MIX_VECTOR_CORE
};

// Kernel-side tiling macros: opkit_emu/tiling_macros.h.
#define KERNEL_TASK_TYPE_DEFAULT(...)
#define KERNEL_TASK_TYPE(...)

// Placed after a kernel definition in a module TU: exports the launch ABI entry point.
// The anonymous-namespace tag gives every template instantiation of the launcher internal linkage,
// so dtype variants of one kernel never export colliding weak symbols.
#define OPKIT_EMU_DEFINE_MODULE(entry, num_gm_args)                                                         \
  namespace {                                                                                               \
  struct OpkitEmuModuleTag_ {};                                                                             \
  }                                                                                                         \
  extern "C" __attribute__((visibility("default"))) int32_t opkit_kernel_launch(const opkit_launch_args* a, \
                                                                                opkit_launch_result* r) {   \
    return ::opkit_emu::module_launch<(num_gm_args), OpkitEmuModuleTag_>(a, r, #entry, entry);             \
  }                                                                                                         \
  /* a tensor list's members for the next launch on this thread: n (offset, data, allocation) triples */    \
  extern "C" __attribute__((visibility("default"))) int32_t opkit_kernel_set_list_members(                  \
      uint32_t arg, uint32_t n, const uint64_t* triples) {                                                 \
    return ::opkit_emu::set_list_members(arg, n, triples);                                                  \
  }                                                                                                         \
  /* the thread's last checked launch: a bit per argument it wrote, one per argument whose padding it touched */ \
  extern "C" __attribute__((visibility("default"))) int32_t opkit_kernel_last_marks(uint64_t* written,      \
                                                                                    uint64_t* pad_touched) { \
    return ::opkit_emu::get_last_marks(written, pad_touched);                                               \
  }
