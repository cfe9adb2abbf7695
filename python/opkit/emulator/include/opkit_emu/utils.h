// Small scalar helpers CANN's kernel headers declare and kernels use by name: DivCeil / AlignUp / Ceil /
// ConstCeil, likely / unlikely, the float16_t / float32_t aliases (mirror-cann/asc-devkit 82b89a15:
// impl/basic_api/utils/kernel_utils_macros.h for likely / unlikely, kernel_utils_ceil_oom_que.h for
// DivCeil / AlignUp / Ceil).
#pragma once
#include <cstdint>

#include "opkit_emu/config.h"
#include "opkit_emu/types.h"

namespace AscendC {
__aicore__ constexpr inline uint32_t DivCeil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ constexpr inline uint32_t AlignUp(uint32_t a, uint32_t b) { return DivCeil(a, b) * b; }
__aicore__ constexpr inline uint32_t ConstCeil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Ceil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
}  // namespace AscendC

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

// Element type aliases some kernels use.
using float16_t = half;
using float32_t = float;
