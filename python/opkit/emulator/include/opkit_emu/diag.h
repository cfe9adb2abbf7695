// Where a kernel called an API (SrcLoc), message formatting, and the rule-violation exception.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <string>

namespace opkit_emu {

// Where a kernel called an API: filled by default arguments at the call site.
struct SrcLoc {
  const char* file;
  int line;
  static constexpr SrcLoc current(const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return {f, l}; }
};
#define OPKIT_LOC ::opkit_emu::SrcLoc loc = ::opkit_emu::SrcLoc::current()

inline std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string strf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// "1 element", "3 elements".
inline std::string plural(unsigned long long n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// A broken hardware rule. The message format is fixed by docs/architecture.md "Errors".
struct Violation : std::exception {
  std::string rule, call, file, detail, msg;
  int line = 0, block = -1;
  Violation(std::string r, std::string c, SrcLoc loc, int b, std::string d)
      : rule(std::move(r)), call(std::move(c)), file(loc.file ? loc.file : "<unknown>"), detail(std::move(d)),
        line(loc.line), block(b) {
    msg = "opkit emulator: [" + rule + "] " + call + " at " + file + ":" + std::to_string(line) + " (block " +
          std::to_string(block) + "): " + detail;
  }
  const char* what() const noexcept override { return msg.c_str(); }
};

}  // namespace opkit_emu
