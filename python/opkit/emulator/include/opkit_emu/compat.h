// Names CANN's CPU-debug headers declare that real kernels and CPU-debug mains use, declared where CANN
// declares them (mirror-cann/asc-devkit 82b89a15: impl/utils/sys_macros.h for g_coreType / ASCEND_IS_AIV,
// impl/basic_api/kernel_macros.h for ASSERT, impl/basic_api/utils/kernel_utils_macros.h for likely /
// unlikely, impl/basic_api/utils/kernel_utils_ceil_oom_que.h for DivCeil / AlignUp / Ceil, docs
// 调试接口/CPU孪生调试/SetKernelMode.md for KernelMode, 调试接口/异常检测/ascendc_assert.md).
#pragma once
#include <cstdio>
#include <string>

#include "opkit_emu/runtime.h"

// KernelMode is a global name: samples write AscendC::SetKernelMode(KernelMode::AIV_MODE).
enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

namespace AscendC {
using ::KernelMode;
// Core types compared against g_coreType (ASCEND_IS_AIV etc.).
constexpr int32_t MIX = 0, AIC = 1, AIV = 2;
constexpr int32_t AIC_TYPE = AIC, AIV_TYPE = AIV;

__aicore__ constexpr inline uint32_t DivCeil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ constexpr inline uint32_t AlignUp(uint32_t a, uint32_t b) { return DivCeil(a, b) * b; }
__aicore__ constexpr inline uint32_t ConstCeil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Ceil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
}  // namespace AscendC

// The emulator runs vector (AIV) cores only: cube code behind ASCEND_IS_AIC is skipped, as on a
// vector core of a mixed kernel.
inline int32_t g_coreType = AscendC::AIV;
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)

namespace opkit_emu {
// block_idx / block_num read the running block (CANN's CPU mode keeps them as per-process globals;
// here blocks are threads). A kernel's own variable of the same name simply shadows them.
struct BlockIdxVar { operator int64_t() const { return ctx().idx; } };
struct BlockNumVar { operator int64_t() const { return ctx().num; } };

// A kernel's own assertion failed: reported like a rule violation, at the kernel's line.
[[noreturn]] inline void kernel_assert_failed(const char* expr, const char* file, int line, const std::string& msg) {
  fail("kernel-assert", "ASSERT", SrcLoc{file, line},
       "assertion '" + std::string(expr) + "' failed" + (msg.empty() ? std::string() : ": " + msg));
}
inline std::string assert_msg() { return {}; }
template <class... A>
inline std::string assert_msg(const char* fmt, A... a) {
  if constexpr (sizeof...(A) == 0) return fmt;
  else {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, a...);
    return buf;
  }
}
}  // namespace opkit_emu

inline constexpr opkit_emu::BlockIdxVar block_idx{};
inline constexpr opkit_emu::BlockNumVar block_num{};
inline int64_t get_block_idx() { return opkit_emu::ctx().idx; }
inline int64_t get_block_num() { return opkit_emu::ctx().num; }

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

// CPU debug: ASSERT(x) is assert(x) in CANN; here a failed assertion stops the launch with rule
// kernel-assert (an abort would take the Python host down with it).
#ifndef ASSERT
#define ASSERT(x) \
  ((x) ? (void)0 : ::opkit_emu::kernel_assert_failed(#x, __builtin_FILE(), __builtin_LINE(), std::string()))
#endif
#define ascendc_assert(expr, ...) \
  ((expr) ? (void)0 : ::opkit_emu::kernel_assert_failed(#expr, __FILE__, __LINE__, ::opkit_emu::assert_msg(__VA_ARGS__)))

// Element type aliases some kernels use.
using float16_t = half;
using float32_t = float;
