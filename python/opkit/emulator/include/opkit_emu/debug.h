// The kernel's own checks and prints, expanding as CANN's CPU-debug headers expand them (mirror-cann/asc-devkit
// 82b89a15): ASSERT(x) checks x as CANN's CPU mode does (assert(x), impl/basic_api/kernel_macros.h:28), and
// also compiles where only a device build does: there ASSERT is empty (kernel_macros.h:34), so `n = x ASSERT(c);`
// -- no ';' before it, common in CANN samples' descendants -- is `n = x;` on the NPU (it stops CANN's CPU build);
// ascendc_assert(expr[, fmt, ...]) (include/utils/debug/asc_assert.h); ASCENDC_ASSERT(cond, behavior) runs
// `behavior` and stops when cond is false, KERNEL_LOG(level, fmt, ...) prints one tagged line
// (impl/basic_api/kernel_log.h); printf / PRINTF are visible at global scope and in AscendC, print on the
// host, and are silenced by -DASCENDC_DUMP=0 (impl/utils/debug/asc_aicore_printf_impl.h: `using namespace
// __asc_aicore` at global scope). Where CANN raises SIGABRT, a failed check here stops the launch with rule
// kernel-assert at the kernel's line (an abort would take the Python host down with it).
#pragma once
#include <cstdio>
#include <string>

#include "opkit_emu/runtime.h"

namespace opkit_emu {
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

namespace opkit_emu {
// ASSERT(c) is `- KernelAssert(c, ...)`: alone, the unary minus (returning void) is the check; right after an
// expression x, the binary minus checks c and gives x back unchanged (its type and value: x - 0 would turn -0.0
// into +0.0), which is what the device's empty ASSERT leaves.
// Limits (a device build compiles these, here they stop): a void expression before it (`f() ASSERT(c)`), and a
// null-pointer literal (`p = 0 ASSERT(c)`); after `k ? a : b` it checks c only when b is taken.
struct KernelAssert {
  constexpr KernelAssert(bool ok, const char* expr, const char* file, int line) {
    if (!ok) kernel_assert_failed(expr, file, line, std::string());
  }
};
constexpr void operator-(const KernelAssert&) {}
template <class T>
constexpr T&& operator-(T&& x, const KernelAssert&) { return static_cast<T&&>(x); }
}  // namespace opkit_emu

#ifndef ASSERT
#define ASSERT(x) -::opkit_emu::KernelAssert(static_cast<bool>(x), #x, __builtin_FILE(), __builtin_LINE())
#endif
// CANN redefines assert and ascendc_assert to take (expr) or (expr, fmt, ...); both vanish under NDEBUG or
// ASCENDC_DUMP=0 (include/utils/debug/asc_assert.h).
#include <cassert>
#undef assert
#undef ascendc_assert
#if !(defined(ASCENDC_DUMP) && ASCENDC_DUMP == 0) && !defined(NDEBUG)
#define ascendc_assert(expr, ...) \
  ((expr) ? (void)0 : ::opkit_emu::kernel_assert_failed(#expr, __FILE__, __LINE__, ::opkit_emu::assert_msg(__VA_ARGS__)))
#define assert(expr, ...) ascendc_assert(expr, ##__VA_ARGS__)
#else
#define ascendc_assert(...)
#define assert(...)
#endif

#define ASCENDC_ASSERT(cond, behavior)                                                                  \
  do {                                                                                                  \
    if (!(cond)) {                                                                                      \
      behavior;                                                                                         \
      ::opkit_emu::kernel_assert_failed(#cond, __builtin_FILE(), __builtin_LINE(), std::string());      \
    }                                                                                                   \
  } while (0)

namespace opkit_emu::debug_print {
// printf / PRINTF of CANN's CPU mode: a host printf, unless the build sets ASCENDC_DUMP=0.
template <class... A>
inline void printf(const char* fmt, A&&... a) {
#if !(defined(ASCENDC_DUMP) && ASCENDC_DUMP == 0)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"  // the kernel's own format string, as with printf
  std::printf(fmt, a...);
#pragma GCC diagnostic pop
#endif
}
template <class... A>
inline void PRINTF(const char* fmt, A&&... a) { printf(fmt, static_cast<A&&>(a)...); }
}  // namespace opkit_emu::debug_print
using namespace opkit_emu::debug_print;
namespace AscendC {
using opkit_emu::debug_print::printf;
using opkit_emu::debug_print::PRINTF;

enum class LogLevel : uint8_t { KERNEL_DEBUG = 0, KERNEL_INFO = 1, KERNEL_WARN = 2, KERNEL_ERROR = 3 };
}  // namespace AscendC

namespace opkit_emu {
inline std::string log_prefix(const char* level, const char* file, int line, const char* func) {
  const int64_t b = t_ctx ? t_ctx->idx : -1;
  return strf("[%s][Block_%lld][AIV_0][%s:%d][%s] ", level, (long long)b, file, line, func);
}
}  // namespace opkit_emu
#define KERNEL_LOG(level, format, ...) KERNEL_LOG_##level(format, ##__VA_ARGS__)
#define OPKIT_EMU_KERNEL_LOG(tag, format, ...)                                                                  \
  std::printf("%s" format "\n", ::opkit_emu::log_prefix(tag, __FILE__, __LINE__, __FUNCTION__).c_str(), ##__VA_ARGS__)
#define KERNEL_LOG_KERNEL_DEBUG(format, ...) OPKIT_EMU_KERNEL_LOG("DEBUG", format, ##__VA_ARGS__)
#define KERNEL_LOG_KERNEL_INFO(format, ...) OPKIT_EMU_KERNEL_LOG("INFO", format, ##__VA_ARGS__)
#define KERNEL_LOG_KERNEL_WARN(format, ...) OPKIT_EMU_KERNEL_LOG("WARN", format, ##__VA_ARGS__)
#define KERNEL_LOG_KERNEL_ERROR(format, ...) OPKIT_EMU_KERNEL_LOG("ERROR", format, ##__VA_ARGS__)
