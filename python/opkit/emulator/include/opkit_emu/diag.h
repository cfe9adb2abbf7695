// Where a kernel called an API (SrcLoc), message formatting, and the rule-violation exception.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>

#include "opkit_emu/config.h"  // OPKIT_EMU_RT

namespace opkit_emu {

// Where a kernel called an API: filled by default arguments at the call site.
struct SrcLoc {
  const char* file;
  int line;
  static constexpr SrcLoc current(const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return {f, l}; }
};
#define OPKIT_LOC ::opkit_emu::SrcLoc loc = ::opkit_emu::SrcLoc::current()
// CANN's kernels take an API's address with CANN's exact signature (ops-nn foreach_utils: `NoScalarBinaryOp<T>*
// op = Div`), which the trailing `loc` parameter would not match. Each such API also has a twin with a trailing
// empty pack instead of `loc`: a call prefers the `loc` form (a template without a trailing pack is more
// specialized, [temp.deduct.partial]/11), a conversion to CANN's function-pointer type finds only the twin, and
// the enable_if keeps the twin out of calls with more arguments. A violation seen through a pointer names no line.
#define OPKIT_NOLOC class... OpkitNoLoc, ::std::enable_if_t<sizeof...(OpkitNoLoc) == 0, int> = 0
#define OPKIT_NOLOC_PARAM OpkitNoLoc...
#define OPKIT_PTR_LOC ::opkit_emu::SrcLoc{"(an API called through a function pointer)", 0}

OPKIT_EMU_RT std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT std::string strf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}
#endif

// "1 element", "3 elements".
OPKIT_EMU_RT std::string plural(unsigned long long n, const char* noun);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT std::string plural(unsigned long long n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}
#endif

// A broken hardware rule. The message format is fixed by docs/architecture.md "Errors".
struct Violation : std::exception {
  std::string rule, call, file, detail, msg;
  int line = 0, block = -1;
  Violation(std::string r, std::string c, SrcLoc loc, int b, std::string d);
  const char* what() const noexcept override { return msg.c_str(); }
};
#if OPKIT_EMU_RT_DEFS  // Violation members compiled once (OPKIT_EMU_RT, config.h)
OPKIT_EMU_RT Violation::Violation(std::string r, std::string c, SrcLoc loc, int b, std::string d)
    : rule(std::move(r)), call(std::move(c)), file(loc.file ? loc.file : "<unknown>"), detail(std::move(d)),
      line(loc.line), block(b) {
  msg = "opkit emulator: [" + rule + "] " + call + " at " + file + ":" + std::to_string(line) + " (block " +
        std::to_string(block) + "): " + detail;
}
#endif

}  // namespace opkit_emu
