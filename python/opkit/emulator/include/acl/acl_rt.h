// The ACL runtime a CANN `.asc` program calls (aclInit, aclrtMalloc, aclrtMemcpy, streams, events, ...),
// implemented on the CPU for `opkit run-asc` (python/opkit/emulator/asc_program.py). Reached only through
// acl/acl.h with OPKIT_ASC_PROGRAM defined: in the ICPU_RUN_KF route acl.h declares no runtime function.
//
// Signatures are CANN's: acl/acl.h, acl/acl_rt.h, acl/acl_base.h of the CANN headers torch_npu 2.8.0 ships
// (torch_npu/include/third_party/acl/inc/acl/: acl.h:40/52/73, acl_rt.h:362-1644, error codes acl_base.h:65-133),
// read, not copied. CANN's own CPU build of a `.asc` links an ACL stub the same way (asc-devkit 82b89a15
// cmake/asc/asc_modules/CMakeASCInformation.cmake:197-250: `--run-mode=cpu`, `-D__NPU_ARCH__=2201`,
// `ascendc_acl_stub`).
//
// What is real here:
// - device memory (aclrtMalloc) is emulator GM of the device's size, ALIGN_UP(size, 32) + 32 bytes, the bytes past
//   `size` padding (garbage until a launch writes it, and written until aclrtFree, docs/emulator.md "Data
//   extent"), the bytes inside it garbage too until an H2D copy, aclrtMemset or a kernel writes them (a D2H copy of
//   them warns, `acl-uninitialized`): registered like GmAlloc, so a kernel may touch only it (the gm-bounds rule) -- host memory
//   (aclrtMallocHost, the stack, a std::vector) passed to a kernel is a violation;
// - aclrtMemcpy/aclrtMemset check the kind against where each pointer lives, count against destMax (CANN
//   returns ACL_ERROR_INVALID_PARAM), and the device range against its allocation (a copy past it is the
//   `acl-bounds` rule: the NPU would corrupt a neighbour; exit 1);
// - a stream is a queue: a `<<<>>>` launch and the *Async calls run at aclrtSynchronizeStream /
//   aclrtSynchronizeDevice / aclrtDestroyStream / aclrtRecordEvent (work on the CPU is sequential, so recording
//   an event after draining its stream is all an event has to order; waits and event destruction are then
//   no-ops). A synchronous aclrtMemcpy reading the device while a stream still holds work is flagged on stderr
//   (`acl-unsynchronized`: the NPU may not have run the kernel yet) and the work is run first;
// - contexts, devices and events are handles checked for use after destruction.
// Every failure prints "opkit acl: ..." with the caller's file:line (g++'s __builtin_FILE/LINE default
// arguments, like the kernel API's SrcLoc) and returns CANN's error code.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "opkit/platform.h"

#include "tikicpulib.h"

#define ACL_FUNC_VISIBILITY

static const int ACL_ERROR_INVALID_PARAM = 100000;         // acl_base.h:65
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;     // acl_base.h:67
static const int ACL_ERROR_BAD_ALLOC = 200000;             // acl_base.h:121
static const int ACL_ERROR_INVALID_DEVICE = 200002;        // acl_base.h:123
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;   // acl_base.h:127
static const int ACL_ERROR_FAILURE = 500001;               // acl_base.h:133

#define ACL_EVENT_SYNC 0x00000001u                     // acl_rt.h:22
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002u
#define ACL_EVENT_TIME_LINE 0x00000008u
#define ACL_EVENT_EXTERNAL 0x00000020u
typedef enum aclrtLastErrLevel { ACL_RT_THREAD_LEVEL = 0 } aclrtLastErrLevel;  // acl_rt.h:195

namespace opkit_acl {

struct Runtime {  // the program's host thread only: kernels never call ACL
  bool inited = false;
  int32_t device = -1;
  std::map<const uint8_t*, size_t> device_mem;  // aclrtMalloc'ed: base -> bytes
  std::set<void*> host_mem;                     // aclrtMallocHost'ed
  std::map<void*, std::deque<std::function<void()>>> streams;  // nullptr: the default stream
  std::set<void*> contexts, events;
  std::string last_error;
  aclError last_code = ACL_SUCCESS;  // aclrtGetLastError's
  int next_handle = 1;
  static Runtime& get() {
    static Runtime r;
    return r;
  }
  void* new_handle() { return reinterpret_cast<void*>(static_cast<uintptr_t>(0x10000 + 16 * next_handle++)); }
};

inline aclError fail(aclError code, const char* file, int line, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "opkit acl: %s:%d: %s (returns %d)\n", file, line, buf, code);
  std::fflush(stderr);
  Runtime::get().last_error = buf;
  Runtime::get().last_code = code;
  return code;
}

// A rule violation of the program (not a parameter CANN rejects): print and stop, as a kernel violation does.
[[noreturn]] inline void violation(const char* rule, const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "opkit emulator: [%s] %s at %s:%d\n", rule, what.c_str(), file, line);
  std::fflush(stderr);
  std::exit(1);
}

// The device allocation holding p, or end() (p may point inside one).
inline std::map<const uint8_t*, size_t>::iterator device_block(const void* p) {
  auto& m = Runtime::get().device_mem;
  const auto* b = static_cast<const uint8_t*>(p);
  auto it = m.upper_bound(b);
  if (it == m.begin()) return m.end();
  --it;
  return (b >= it->first && b < it->first + (it->second ? it->second : 1)) ? it : m.end();
}
inline bool is_device(const void* p) { return device_block(p) != Runtime::get().device_mem.end(); }

// Checks [p, p + n) stays in p's device allocation.
inline void check_device_range(const char* call, const char* which, const void* p, size_t n, const char* file, int line) {
  auto it = device_block(p);
  const size_t off = static_cast<size_t>(static_cast<const uint8_t*>(p) - it->first);
  if (off + n > it->second)
    violation("acl-bounds", file, line,
              std::string(call) + ": " + which + " range of " + std::to_string(n) + " bytes at offset " +
                  std::to_string(off) + " runs past its aclrtMalloc allocation of " + std::to_string(it->second) +
                  " bytes (the NPU would overwrite or read a neighbouring buffer)");
}

inline void drain(void* stream) {
  auto& q = Runtime::get().streams[stream];
  while (!q.empty()) {
    auto f = std::move(q.front());
    q.pop_front();
    f();
  }
}
inline void drain_all() {
  for (auto& s : Runtime::get().streams) drain(s.first);
}
inline bool known_stream(void* s) { return s == nullptr || Runtime::get().streams.count(s); }
inline bool any_pending() {
  for (auto& s : Runtime::get().streams)
    if (!s.second.empty()) return true;
  return false;
}

// What a copy or memset does to the device's never-written bytes (gm_pad.h gm_data_*), after it moved the bytes:
// host to device and aclrtMemset write them; device to device moves their garbage along; device to host hands the
// host garbage -- legal (aclrtMemcpy copies bytes, it has no notion of written), so a warning, not a failure: a
// program that copies back a whole buffer its kernel wrote only part of and uses only that part is right, one that
// uses the rest reads garbage on the NPU and here (the host gets the garbage fill, GmPadPoison::kGarbage).
// The device-to-host warning: n garbage bytes copied, the first at device address first (one line per call).
inline void warn_garbage_copied(uint64_t n, const uint8_t* first, const char* call, const char* file, int line) {
  auto it = device_block(first);
  std::fprintf(stderr,
               "opkit acl: [acl-uninitialized] %s:%d: %s copies %llu bytes of device garbage to the host -- memory "
               "nothing wrote since aclrtMalloc (no aclrtMemset, host-to-device copy or kernel store), or an "
               "atomic add onto such memory -- the first at byte "
               "%llu of its %zu-byte allocation: the NPU hands over garbage there (a warning: the copy is legal; "
               "using those bytes is not)\n",
               file, line, call, static_cast<unsigned long long>(n),
               static_cast<unsigned long long>(first - it->first), it->second);
  std::fflush(stderr);
}
inline void copied(void* dst, const void* src, size_t count, aclrtMemcpyKind kind, const char* call, const char* file,
                   int line) {
  if (kind == ACL_MEMCPY_HOST_TO_DEVICE) {
    opkit_emu::gm_data_write(dst, count);
  } else if (kind == ACL_MEMCPY_DEVICE_TO_DEVICE) {
    opkit_emu::gm_data_copy(dst, src, count);
  } else if (kind == ACL_MEMCPY_DEVICE_TO_HOST) {
    uint64_t first = 0;
    const uint64_t n = opkit_emu::gm_data_unwritten(src, count, &first);
    if (n) warn_garbage_copied(n, static_cast<const uint8_t*>(src) + first, call, file, line);
  }
}

// The parameters CANN checks when the call is made (an *Async call too: its error is its return value), and the
// device ranges (a violation); the copy itself follows, at once or queued.
inline aclError check_copy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                           const char* call, const char* file, int line) {
  if (!dst || !src) return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s: null %s pointer", call, dst ? "src" : "dst");
  if (count > destMax)
    return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s: count %zu exceeds destMax %zu", call, count, destMax);
  const bool want_dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  const bool want_src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  static const char* names[] = {"ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST",
                                "ACL_MEMCPY_DEVICE_TO_DEVICE"};
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
    return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s: unknown aclrtMemcpyKind %d", call, static_cast<int>(kind));
  if (is_device(dst) != want_dst_dev)
    return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s with %s: dst is %s memory", call, names[kind],
                want_dst_dev ? "host (not aclrtMalloc'ed)" : "device (aclrtMalloc'ed)");
  if (is_device(src) != want_src_dev)
    return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s with %s: src is %s memory", call, names[kind],
                want_src_dev ? "host (not aclrtMalloc'ed)" : "device (aclrtMalloc'ed)");
  if (want_dst_dev) check_device_range(call, "dst", dst, count, file, line);
  if (want_src_dev) check_device_range(call, "src", src, count, file, line);
  return ACL_SUCCESS;
}

// A synchronous call touching device memory while launched work is still queued: on the NPU it races with that
// work (reads may see the old data, writes may land before the kernel reads), so it is reported and the queued
// work runs first.
inline void unsynchronized(const char* call, bool writes, const char* file, int line) {
  if (!any_pending()) return;
  std::fprintf(stderr,
               "opkit acl: [acl-unsynchronized] %s:%d: %s %s device memory while a launched kernel has not been "
               "synchronized (aclrtSynchronizeStream); running it first -- on the NPU it may not have run\n",
               file, line, call, writes ? "writes" : "reads");
  std::fflush(stderr);
  drain_all();
}

// Runs one launch now, as ICPU_RUN_KF does (launch.h icpu_run: a violation prints and exits 1), except that up to
// the chip's vector cores run at once (opkit::kPlatform.vector_cores, 48 on the 910B), a host thread each: on the
// NPU those blocks are resident together, and CANN's samples rely on it -- a block spinning on a flag another block
// writes to GM (asc-devkit 82b89a15 examples/01_simd_cpp_api/03_basic_api/09_utils/gm_by_dcache) would never
// finish if the blocks ran one after another.
template <class F>
inline void run_now(const char* name, uint32_t block_dim, const F& f) {
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  std::vector<::opkit_emu::GmRegion> gm;
  {
    auto& reg = ::opkit_emu::GmAllocRegistry::get();
    std::lock_guard<std::mutex> lk(reg.mu);
    gm = reg.regions;
  }
  const uint32_t threads = std::min<uint32_t>(block_dim, ::opkit::kPlatform.vector_cores);
  ::opkit_emu::LaunchOutcome o = ::opkit_emu::run_blocks(block_dim, ::opkit_emu::icpu_tiling_key(), threads, gm, f);
  ::opkit_emu::last_stats() = o.stats;
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
}

// One `kernel<<<blockDim, l2ctrl, stream>>>(args)`: queued on the stream, run over blockDim blocks with the
// emulator's rules (ICPU_RUN_KF's runner) when the stream is synchronized.
struct Launch {
  const char* name;
  const char* file;
  int line;
  uint32_t block_dim;
  void* stream;
  template <class K, class... A>
  void run(K kernel, A... args) const {
    auto& rt = Runtime::get();
    if (!known_stream(stream))
      violation("acl-handle", file, line,
                std::string("launch of ") + name + ": stream is not one aclrtCreateStream returned (or was destroyed)");
    if (block_dim == 0) violation("api-argument", file, line, std::string("launch of ") + name + ": blockDim is 0");
    const char* n = name;
    const uint32_t bd = block_dim;
    rt.streams[stream].push_back([n, bd, kernel, args...]() { run_now(n, bd, [&]() { kernel(args...); }); });
  }
};

template <class L2 = void*, class S = void*>
inline Launch launch_config(const char* name, const char* file, int line, uint32_t blockDim, L2 l2ctrl = nullptr,
                            S stream = nullptr) {
  (void)l2ctrl;  // L2 cache control: no cache here
  void* handle = nullptr;  // `nullptr` / `0` / omitted: the default stream
  if constexpr (std::is_pointer_v<S>) handle = reinterpret_cast<void*>(stream);
  else if constexpr (std::is_integral_v<S>) handle = reinterpret_cast<void*>(static_cast<uintptr_t>(stream));
  else static_assert(std::is_same_v<S, std::nullptr_t>, "the launch's stream is an aclrtStream");
  return Launch{name, file, line, blockDim, handle};
}

}  // namespace opkit_acl

#define OPKIT_ACL_SITE const char *file_ = __builtin_FILE(), int line_ = __builtin_LINE()

inline aclError aclInit(const char* configPath, OPKIT_ACL_SITE) {
  (void)configPath;  // a JSON of dump/profiling options: nothing to configure here
  auto& rt = opkit_acl::Runtime::get();
  if (rt.inited) return opkit_acl::fail(ACL_ERROR_REPEAT_INITIALIZE, file_, line_, "aclInit called twice");
  rt.inited = true;
  return ACL_SUCCESS;
}
inline aclError aclFinalize(OPKIT_ACL_SITE) {
  (void)file_, (void)line_;
  opkit_acl::drain_all();
  opkit_acl::Runtime::get().inited = false;
  return ACL_SUCCESS;
}
inline const char* aclGetRecentErrMsg() { return opkit_acl::Runtime::get().last_error.c_str(); }
inline aclError aclrtGetLastError(aclrtLastErrLevel level) {  // reading the thread's error clears it
  (void)level;
  auto& rt = opkit_acl::Runtime::get();
  const aclError e = rt.last_code;
  rt.last_code = ACL_SUCCESS;
  return e;
}

// One device, id 0: the emulated 910B.
inline aclError aclrtSetDevice(int32_t deviceId, OPKIT_ACL_SITE) {
  if (deviceId != 0)
    return opkit_acl::fail(ACL_ERROR_INVALID_DEVICE, file_, line_, "aclrtSetDevice(%d): the emulator has device 0 only",
                           deviceId);
  opkit_acl::Runtime::get().device = deviceId;
  return ACL_SUCCESS;
}
inline aclError aclrtResetDevice(int32_t deviceId, OPKIT_ACL_SITE) {
  if (deviceId != 0) return opkit_acl::fail(ACL_ERROR_INVALID_DEVICE, file_, line_, "aclrtResetDevice(%d)", deviceId);
  opkit_acl::drain_all();
  opkit_acl::Runtime::get().device = -1;
  return ACL_SUCCESS;
}
inline aclError aclrtGetDevice(int32_t* deviceId, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  if (!deviceId) return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtGetDevice: null pointer");
  if (rt.device < 0) return opkit_acl::fail(ACL_ERROR_INVALID_DEVICE, file_, line_, "aclrtGetDevice: no device set");
  *deviceId = rt.device;
  return ACL_SUCCESS;
}
inline aclError aclrtSynchronizeDevice(void) {
  opkit_acl::drain_all();
  return ACL_SUCCESS;
}

inline aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  if (!context) return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtCreateContext: null pointer");
  if (deviceId != 0) return opkit_acl::fail(ACL_ERROR_INVALID_DEVICE, file_, line_, "aclrtCreateContext(%d)", deviceId);
  *context = rt.new_handle();
  rt.contexts.insert(*context);
  rt.device = deviceId;  // CANN: creating a context makes the device current
  return ACL_SUCCESS;
}
inline aclError aclrtDestroyContext(aclrtContext context, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().contexts.erase(context))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtDestroyContext: not a live context");
  return ACL_SUCCESS;
}
inline aclError aclrtSetCurrentContext(aclrtContext context, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().contexts.count(context))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtSetCurrentContext: not a live context");
  return ACL_SUCCESS;
}

inline aclError aclrtCreateStream(aclrtStream* stream, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  if (!stream) return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtCreateStream: null pointer");
  *stream = rt.new_handle();
  rt.streams[*stream];
  return ACL_SUCCESS;
}
inline aclError aclrtDestroyStream(aclrtStream stream, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  if (!stream || !rt.streams.count(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtDestroyStream: not a live stream");
  opkit_acl::drain(stream);
  rt.streams.erase(stream);
  return ACL_SUCCESS;
}
inline aclError aclrtSynchronizeStream(aclrtStream stream, OPKIT_ACL_SITE) {
  if (!opkit_acl::known_stream(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtSynchronizeStream: not a live stream");
  opkit_acl::drain(stream);
  return ACL_SUCCESS;
}

inline aclError aclrtCreateEvent(aclrtEvent* event, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  if (!event) return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtCreateEvent: null pointer");
  *event = rt.new_handle();
  rt.events.insert(*event);
  return ACL_SUCCESS;
}
inline aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag, OPKIT_ACL_SITE) {
  (void)flag;
  return aclrtCreateEvent(event, file_, line_);
}
inline aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag, OPKIT_ACL_SITE) {
  (void)flag;
  return aclrtCreateEvent(event, file_, line_);
}
inline aclError aclrtDestroyEvent(aclrtEvent event, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().events.erase(event))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtDestroyEvent: not a live event");
  return ACL_SUCCESS;
}
inline aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().events.count(event) || !opkit_acl::known_stream(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtRecordEvent: not a live event or stream");
  opkit_acl::drain(stream);  // the event completes when the work before it has: run that work now
  return ACL_SUCCESS;
}
inline aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().events.count(event) || !opkit_acl::known_stream(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtStreamWaitEvent: not a live event or stream");
  return ACL_SUCCESS;  // the recorded work already ran at aclrtRecordEvent
}
inline aclError aclrtSynchronizeEvent(aclrtEvent event, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().events.count(event))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtSynchronizeEvent: not a live event");
  return ACL_SUCCESS;
}

inline aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy, OPKIT_ACL_SITE) {
  (void)policy;  // huge / normal pages: one kind of memory here
  if (!devPtr || size == 0)
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtMalloc: %s",
                           devPtr ? "size 0" : "null pointer");
  if (size > SIZE_MAX - 127)  // the rounding below (and GmAlloc's to 64 bytes) would wrap to a tiny buffer
    return opkit_acl::fail(ACL_ERROR_BAD_ALLOC, file_, line_, "aclrtMalloc: %zu bytes: too large to allocate", size);
  // emulator GM the kernels' bounds checks know, as the device allocates it: ALIGN_UP(size, 32) + 32 bytes (CANN
  // runtime API aclrtMalloc), the bytes past `size` padding a kernel's rounded-up tail may land in, and garbage: the
  // device does not clear what it allocates (gm_pad.h). aclrtMemcpy / aclrtMemset still stop at `size`.
  // Its data is garbage too until the program or a kernel writes it (gm_pad.h gm_data_begin: the host bytes hold
  // kGarbage, and a kernel using them fails ub-uninitialized; before, zeros that counted as written).
  const size_t bytes = (size + 31) / 32 * 32 + 32;
  void* p = opkit_emu::gm_alloc_extent(bytes, size);
  if (!p) return opkit_acl::fail(ACL_ERROR_BAD_ALLOC, file_, line_, "aclrtMalloc: %zu bytes: out of host memory", size);
  std::memset(p, opkit_emu::GmPadPoison::kGarbage, bytes);
  opkit_emu::gm_data_begin({static_cast<const uint8_t*>(p), bytes, -1, size});
  opkit_acl::Runtime::get().device_mem[static_cast<const uint8_t*>(p)] = size;
  *devPtr = p;
  return ACL_SUCCESS;
}
inline aclError aclrtFree(void* devPtr, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  auto it = rt.device_mem.find(static_cast<const uint8_t*>(devPtr));
  if (it == rt.device_mem.end())
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_,
                           "aclrtFree: %p is not the start of an aclrtMalloc allocation (freed twice, or host memory)",
                           devPtr);
  opkit_acl::drain_all();  // a queued kernel may still use it
  rt.device_mem.erase(it);
  AscendC::GmFree(devPtr);
  return ACL_SUCCESS;
}
inline aclError aclrtMallocHost(void** hostPtr, size_t size, OPKIT_ACL_SITE) {
  if (!hostPtr || size == 0)
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtMallocHost: %s",
                           hostPtr ? "size 0" : "null pointer");
  void* p = std::calloc(1, size);
  if (!p) return opkit_acl::fail(ACL_ERROR_BAD_ALLOC, file_, line_, "aclrtMallocHost: %zu bytes", size);
  opkit_acl::Runtime::get().host_mem.insert(p);
  *hostPtr = p;
  return ACL_SUCCESS;
}
inline aclError aclrtFreeHost(void* hostPtr, OPKIT_ACL_SITE) {
  if (!opkit_acl::Runtime::get().host_mem.erase(hostPtr))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_,
                           "aclrtFreeHost: %p is not an aclrtMallocHost allocation (freed twice?)", hostPtr);
  std::free(hostPtr);
  return ACL_SUCCESS;
}

inline aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                            OPKIT_ACL_SITE) {
  aclError e = opkit_acl::check_copy(dst, destMax, src, count, kind, "aclrtMemcpy", file_, line_);
  if (e != ACL_SUCCESS) return e;
  if (kind != ACL_MEMCPY_HOST_TO_HOST)  // device to device reads and writes: named by its write
    opkit_acl::unsynchronized("aclrtMemcpy", kind != ACL_MEMCPY_DEVICE_TO_HOST, file_, line_);
  if (count) std::memmove(dst, src, count);
  opkit_acl::copied(dst, src, count, kind, "aclrtMemcpy", file_, line_);
  return ACL_SUCCESS;
}
inline aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                 aclrtStream stream, OPKIT_ACL_SITE) {
  if (!opkit_acl::known_stream(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtMemcpyAsync: not a live stream");
  aclError e = opkit_acl::check_copy(dst, destMax, src, count, kind, "aclrtMemcpyAsync", file_, line_);
  if (e != ACL_SUCCESS) return e;
  const char* file = file_;
  const int line = line_;
  opkit_acl::Runtime::get().streams[stream].push_back([=]() {
    if (count) std::memmove(dst, src, count);
    opkit_acl::copied(dst, src, count, kind, "aclrtMemcpyAsync", file, line);
  });
  return ACL_SUCCESS;
}
namespace opkit_acl {
inline aclError check_memset(const char* call, void* devPtr, size_t maxCount, size_t count, const char* file, int line) {
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s: null pointer", call);
  if (count > maxCount)
    return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s: count %zu exceeds maxCount %zu", call, count, maxCount);
  // CANN: "the system determines whether it is host or device according to the address" (acl_rt.h:915)
  if (is_device(devPtr)) check_device_range(call, "dst", devPtr, count, file, line);
  return ACL_SUCCESS;
}
}  // namespace opkit_acl
inline aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count, OPKIT_ACL_SITE) {
  aclError e = opkit_acl::check_memset("aclrtMemset", devPtr, maxCount, count, file_, line_);
  if (e != ACL_SUCCESS) return e;
  if (opkit_acl::is_device(devPtr)) opkit_acl::unsynchronized("aclrtMemset", true, file_, line_);
  std::memset(devPtr, value, count);
  opkit_emu::gm_data_write(devPtr, count);  // host memory: not an allocation gm_data_write knows, nothing done
  return ACL_SUCCESS;
}
inline aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream,
                                 OPKIT_ACL_SITE) {
  if (!opkit_acl::known_stream(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtMemsetAsync: not a live stream");
  aclError e = opkit_acl::check_memset("aclrtMemsetAsync", devPtr, maxCount, count, file_, line_);
  if (e != ACL_SUCCESS) return e;
  opkit_acl::Runtime::get().streams[stream].push_back([=]() {
    std::memset(devPtr, value, count);
    opkit_emu::gm_data_write(devPtr, count);
  });
  return ACL_SUCCESS;
}

// 2-D copies: `height` rows of `width` bytes, rows `dpitch` / `spitch` bytes apart (acl_rt.h:1054-1085).
namespace opkit_acl {
inline aclError check_copy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                             aclrtMemcpyKind kind, const char* call, const char* file, int line) {
  if (width > dpitch || width > spitch)
    return fail(ACL_ERROR_INVALID_PARAM, file, line, "%s: width %zu exceeds a pitch (%zu, %zu)", call, width, dpitch,
                spitch);
  for (size_t r = 0; r < height; ++r) {
    aclError e = check_copy(static_cast<uint8_t*>(dst) + r * dpitch, width,
                            static_cast<const uint8_t*>(src) + r * spitch, width, kind, call, file, line);
    if (e != ACL_SUCCESS) return e;
  }
  return ACL_SUCCESS;
}
inline void copy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   aclrtMemcpyKind kind, const char* call, const char* file, int line) {
  // a device-to-host copy warns once, with the total over its rows (not a line per row)
  uint64_t garbage = 0;
  const uint8_t* first = nullptr;
  for (size_t r = 0; r < height; ++r) {
    const auto* s = static_cast<const uint8_t*>(src) + r * spitch;
    std::memmove(static_cast<uint8_t*>(dst) + r * dpitch, s, width);
    if (kind != ACL_MEMCPY_DEVICE_TO_HOST) {
      copied(static_cast<uint8_t*>(dst) + r * dpitch, s, width, kind, call, file, line);
      continue;
    }
    uint64_t at = 0;
    const uint64_t n = opkit_emu::gm_data_unwritten(s, width, &at);
    if (n && !garbage) first = s + at;
    garbage += n;
  }
  if (garbage) warn_garbage_copied(garbage, first, call, file, line);
}
}  // namespace opkit_acl
inline aclError aclrtMemcpy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              aclrtMemcpyKind kind, OPKIT_ACL_SITE) {
  if (width > dpitch || width > spitch)
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtMemcpy2d: width %zu exceeds a pitch (%zu, %zu)",
                           width, dpitch, spitch);
  aclError e = opkit_acl::check_copy2d(dst, dpitch, src, spitch, width, height, kind, "aclrtMemcpy2d", file_, line_);
  if (e != ACL_SUCCESS) return e;
  if (kind != ACL_MEMCPY_HOST_TO_HOST)
    opkit_acl::unsynchronized("aclrtMemcpy2d", kind == ACL_MEMCPY_HOST_TO_DEVICE, file_, line_);
  opkit_acl::copy2d(dst, dpitch, src, spitch, width, height, kind, "aclrtMemcpy2d", file_, line_);
  return ACL_SUCCESS;
}
inline aclError aclrtMemcpy2dAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, aclrtMemcpyKind kind, aclrtStream stream, OPKIT_ACL_SITE) {
  if (!opkit_acl::known_stream(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtMemcpy2dAsync: not a live stream");
  aclError e = opkit_acl::check_copy2d(dst, dpitch, src, spitch, width, height, kind, "aclrtMemcpy2dAsync", file_,
                                       line_);
  if (e != ACL_SUCCESS) return e;
  const char* file = file_;
  const int line = line_;
  opkit_acl::Runtime::get().streams[stream].push_back([=]() {
    opkit_acl::copy2d(dst, dpitch, src, spitch, width, height, kind, "aclrtMemcpy2dAsync", file, line);
  });
  return ACL_SUCCESS;
}

inline aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag, OPKIT_ACL_SITE) {
  (void)priority, (void)flag;  // one queue per stream whatever its priority
  return aclrtCreateStream(stream, file_, line_);
}
inline aclError aclrtDestroyStreamForce(aclrtStream stream, OPKIT_ACL_SITE) {
  auto& rt = opkit_acl::Runtime::get();
  if (!stream || !rt.streams.count(stream))
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtDestroyStreamForce: not a live stream");
  rt.streams.erase(stream);  // "force": the queued work is dropped, not run
  return ACL_SUCCESS;
}
inline aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion, OPKIT_ACL_SITE) {
  if (!majorVersion || !minorVersion || !patchVersion)
    return opkit_acl::fail(ACL_ERROR_INVALID_PARAM, file_, line_, "aclrtGetVersion: null pointer");
  *majorVersion = 1, *minorVersion = 0, *patchVersion = 0;  // the ACL interface version the headers above describe
  return ACL_SUCCESS;
}
// Bytes of one element (acl_base.h:341); 0 for an unknown type, as a size query that has no answer.
inline size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_FLOAT16: case ACL_INT16: case ACL_UINT16: case ACL_BF16: return 2;
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
    default: return 0;
  }
}

#undef OPKIT_ACL_SITE
