// The op's host tiling (its tiling.h, found on the include path: the op folder) in a translation unit of
// its own -- no emulator, no torch -- linked into each of the op's kernel modules, which export it
// (opkit/launch_abi.h). cmake/opkit_emulator.cmake defines OPKIT_TILING_STRUCT / OPKIT_TILING_FUNC
// (<Op>TilingData / <Op>Tiling, docs/architecture.md "Tiling ABI").
#include <cstdio>
#include <exception>
#include <new>

#include "opkit/tiling.h"
#include "tiling.h"

extern "C" __attribute__((visibility("default"))) unsigned long opkit_tiling_size() {
  return sizeof(OPKIT_TILING_STRUCT);
}

// Value-initialises the struct in `td`, then runs the tiling function; an exception becomes `error`.
extern "C" __attribute__((visibility("default"))) int opkit_tiling_run(opkit::TilingContext* ctx, void* td, char* error,
                                                                       unsigned long cap) {
  try {
    auto* t = new (td) OPKIT_TILING_STRUCT{};
    OPKIT_TILING_FUNC(*ctx, *t);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(error, cap, "%s", e.what());
  } catch (...) {
    std::snprintf(error, cap, "unknown C++ exception");
  }
  return 1;
}
