// opkit's stand-in for CANN's CPU twin-debug host library: GmAlloc/GmFree, SetKernelMode,
// ICPU_SET_TILING_KEY, ICPU_RUN_KF (facts sheet §5 "CPU twin-debug path"). A rule violation prints
// "opkit emulator: [<rule>] ..." to stderr and exits with status 1.
#pragma once
#include <cstdlib>

#include "kernel_operator.h"

namespace AscendC {

inline KernelMode& kernel_mode_() { static KernelMode m = KernelMode::MIX_MODE; return m; }
inline void SetKernelMode(KernelMode m) { kernel_mode_() = m; }

}  // namespace AscendC

namespace opkit_emu {
// GM of `size` bytes visible to kernels, its first `data` bytes the data extent (the rest padding: garbage until a
// launch writes it, gm_pad.h); zeroed host memory.
inline void* gm_alloc_extent(size_t size, uint64_t data) {
  size_t n = (size + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, n ? n : 64);
  if (!p) return nullptr;
  std::memset(p, 0, n ? n : 64);
  auto& reg = GmAllocRegistry::get();
  std::lock_guard<std::mutex> lk(reg.mu);
  reg.regions.push_back({static_cast<const uint8_t*>(p), size, -1, data});
  return p;
}
}  // namespace opkit_emu

namespace AscendC {

// GM memory visible to kernels; ICPU_RUN_KF bounds-checks kernel accesses against these allocations. All of it is
// data, as CANN's CPU twin-debug GmAlloc gives exactly `size` bytes.
inline void* GmAlloc(size_t size) { return opkit_emu::gm_alloc_extent(size, ~uint64_t(0)); }
inline void GmFree(void* p) {
  if (!p) return;
  opkit_emu::gm_pad_forget(p);  // what launches wrote into its padding goes with it
  auto& reg = opkit_emu::GmAllocRegistry::get();
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    auto& v = reg.regions;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const opkit_emu::GmRegion& r) { return r.base == p; }), v.end());
  }
  std::free(p);
}

}  // namespace AscendC

#define ICPU_SET_TILING_KEY(k) (::opkit_emu::icpu_tiling_key() = static_cast<uint64_t>(k))
#define ICPU_RUN_KF(func, blockdim, ...) \
  ::opkit_emu::icpu_run(#func, static_cast<uint32_t>(blockdim), [&]() { func(__VA_ARGS__); })
