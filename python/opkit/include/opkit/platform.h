// Chip profiles shared by the emulator, the tiling functions and the NPU binding.
// One table, so a tiling that fits the profile also fits the emulator's UB check.
// Figures: docs/facts/ascendc-facts.md §4 (TOTAL_UB_SIZE, reserved bytes, core counts).
#pragma once
#include <cstdint>

namespace opkit {

struct Platform {
  const char* soc;          // e.g. "Ascend910B1"
  const char* profile;      // "ascend910b" | "ascend310p"
  uint32_t npu_arch;        // __NPU_ARCH__: 2201 (A2) or 2002 (310P)
  uint32_t vector_cores;    // AIV count the tiling may launch
  uint32_t ub_total_bytes;  // physical UB per vector core
  uint32_t ub_usable_bytes; // what TPipe::InitBuffer may hand out in total
  bool has_data_copy_pad;   // DataCopyPad exists (A2 yes, 310P no)
  bool has_bf16;            // bf16 DataCopy/Cast/Duplicate exist (A2 yes, 310P no)
};

// A2 (910B): UB 192 KB; usable = 192 KB - 256 B - 8 KB reserved (default compiler option).
inline constexpr Platform kAscend910B{"Ascend910B1", "ascend910b", 2201, 48,
                                      192u * 1024u, 192u * 1024u - 256u - 8u * 1024u, true, true};
// 310P: UB 256 KB, TOTAL_VEC_LOCAL_SIZE = 248 KB; no DataCopyPad, no bf16. Core count is a
// documented estimate (8 vector cores): the facts sheet found no citable figure.
inline constexpr Platform kAscend310P{"Ascend310P1", "ascend310p", 2002, 8,
                                      256u * 1024u, 248u * 1024u, false, false};

// The profile a build targets: -DOPKIT_CHIP_ASCEND310P selects 310P, default is 910B.
#if defined(OPKIT_CHIP_ASCEND310P)
inline constexpr const Platform& kPlatform = kAscend310P;
#else
inline constexpr const Platform& kPlatform = kAscend910B;
#endif

}  // namespace opkit
