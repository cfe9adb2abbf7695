// The kernel's own checks and prints: ASSERT, ascendc_assert, AscendC::printf. CANN's CPU mode maps ASSERT
// to assert (mirror-cann/asc-devkit 82b89a15 impl/basic_api/kernel_macros.h; docs 调试接口/异常检测/
// ascendc_assert.md); here a failed assertion stops the launch with rule kernel-assert at the kernel's line
// (an abort would take the Python host down with it).
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

#ifndef ASSERT
#define ASSERT(x) \
  ((x) ? (void)0 : ::opkit_emu::kernel_assert_failed(#x, __builtin_FILE(), __builtin_LINE(), std::string()))
#endif
#define ascendc_assert(expr, ...) \
  ((expr) ? (void)0 : ::opkit_emu::kernel_assert_failed(#expr, __FILE__, __LINE__, ::opkit_emu::assert_msg(__VA_ARGS__)))

namespace AscendC {
template <class... A> inline void printf(const char* fmt, A... a) { std::printf(fmt, a...); }
}  // namespace AscendC
