// opkit AscendC CPU emulator: compile-time configuration shared by every emulator header.
// What CANN's CPU twin-debug mode defines (facts sheet §1, §7): the kernel qualifiers and address-space
// qualifiers expand to nothing, ASCENDC_CPU_DEBUG and __CCE_KT_TEST__ are defined, __NPU_ARCH__ names
// the chip, and __CCE_AICORE__ is the chip's AI Core version as the device compiler predefines it
// (220 for A2 / 910B, 200 for 310P): kernels branch on it. A tiling.h that hides its host part behind
// `#ifndef __CCE_AICORE__` therefore shows only its struct to a translation unit that includes
// kernel_operator.h first, as on the device.
#pragma once

// -D__NPU_ARCH__=2002 without -DOPKIT_CHIP_ASCEND310P still selects the 310P profile.
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 2002) && !defined(OPKIT_CHIP_ASCEND310P)
#define OPKIT_CHIP_ASCEND310P 1
#endif

#include "opkit/platform.h"

#ifndef __NPU_ARCH__
#if defined(OPKIT_CHIP_ASCEND310P)
#define __NPU_ARCH__ 2002
#else
#define __NPU_ARCH__ 2201
#endif
#endif

#ifndef __CCE_AICORE__
#if defined(OPKIT_CHIP_ASCEND310P)
#define __CCE_AICORE__ 200
#else
#define __CCE_AICORE__ 220
#endif
#endif

#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif
#ifndef __CCE_KT_TEST__
#define __CCE_KT_TEST__ 1
#endif

#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __vector__
#define __vector__
#endif
#ifndef __cube__
#define __cube__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
// bisheng's pipe annotations on a function (which pipes it reads / writes: `__inout_pipe__(S)`,
// `__in_pipe__(S) __out_pipe__(V, S)`; asc-devkit include/basic_api/kernel_tensor.h:159, kernel code such as
// ops-transformer moe_sort_base.h:102): scheduling hints to the device compiler, nothing to model here.
#ifndef __inout_pipe__
#define __inout_pipe__(...)
#endif
#ifndef __in_pipe__
#define __in_pipe__(...)
#endif
#ifndef __out_pipe__
#define __out_pipe__(...)
#endif
#ifndef __inline__
#define __inline__ inline
#endif

#define GM_ADDR __gm__ uint8_t*

namespace opkit_emu {
// Chip profile of this build (python/opkit/include/opkit/platform.h).
inline constexpr const opkit::Platform& kChip = opkit::kPlatform;
inline constexpr bool kIs310P = (__NPU_ARCH__ == 2002);
#ifdef OPKIT_EMU_ALLOW_BF16_MATH
inline constexpr bool kAllowBf16Math = true;   // "naive AMP" variant: models a bf16-computing kernel
#else
inline constexpr bool kAllowBf16Math = false;
#endif
inline constexpr uint32_t kBlk = 32;           // DataBlock bytes
inline constexpr uint32_t kRepeat = 256;       // one vector repeat
}  // namespace opkit_emu

// Hot loops of the emulator are compiled with the vectoriser on even at -O2 / -O0, so a kernel
// built with opkit's default flags runs at host speed. Only emulator helpers are affected.
// No AVX2 clones (target_clones x86-64-v3) of them: measured, they change which NaN an Add or Mul of two
// NaNs returns (the compiler may swap a commutative operation's operands; x86 returns the first one's NaN),
// and results must stay bitwise what they were. Exp's AVX2 path is written out (host_expf.h) and checked.
#if defined(__GNUC__) && !defined(__clang__)
#define OPKIT_EMU_HOT __attribute__((optimize("O3", "no-trapping-math"), noinline))
#else
#define OPKIT_EMU_HOT __attribute__((noinline))
#endif

// The emulator's non-template runtime (the launch and its block threads, the rule bookkeeping every API call
// runs, the reports), marked OPKIT_EMU_RT: header-only by default (inline), so a standalone program compiled with
// `opkit cflags` needs nothing else. opkit's build compiles it once per module flavour into an object linked into
// every kernel module (python/opkit/csrc/op/emulator_runtime.cpp, -DOPKIT_EMU_RUNTIME_IMPL) and compiles the
// modules with -DOPKIT_EMU_RUNTIME_EXTERN, which leaves only the declarations (OPKIT_EMU_RT_DEFS 0): ~1 CPU s of
// every module's compile was this code, generated again for each. Hidden: each module keeps its own copy (one
// worker pool, one launch state per module, as before).
#if defined(OPKIT_EMU_RUNTIME_IMPL) && defined(OPKIT_EMU_RUNTIME_EXTERN)
#error "OPKIT_EMU_RUNTIME_IMPL and OPKIT_EMU_RUNTIME_EXTERN exclude each other"
#endif
// OPKIT_EMU_RT_LAUNCH marks the launch functions whose lambdas become std::thread / std::function states
// (run_blocks_fn, module_launch_fn): header-only they have internal linkage, so those states are not exported from
// a module (as when the launch was a template over an anonymous-namespace tag); with IMPL / EXTERN they are hidden
// runtime functions like every OPKIT_EMU_RT one (the object defines them, each module references them).
#if defined(OPKIT_EMU_RUNTIME_IMPL) || defined(OPKIT_EMU_RUNTIME_EXTERN)
#define OPKIT_EMU_RT __attribute__((visibility("hidden")))
#define OPKIT_EMU_RT_LAUNCH __attribute__((visibility("hidden")))
#else
#define OPKIT_EMU_RT inline
#define OPKIT_EMU_RT_LAUNCH static inline
#endif
// A noinline runtime function (OPKIT_EMU_HOT, cast.h) is declared through OPKIT_EMU_RT_NOINLINE_DECL: header-only
// it is one inline noinline definition with no declaration apart (GCC warns on an inline declaration and a noinline
// definition of one function), with IMPL / EXTERN the one declaration both the object and the modules see.
#if defined(OPKIT_EMU_RUNTIME_IMPL) || defined(OPKIT_EMU_RUNTIME_EXTERN)
#define OPKIT_EMU_RT_NOINLINE_DECL(...) __VA_ARGS__;
#else
#define OPKIT_EMU_RT_NOINLINE_DECL(...)
#endif
#ifdef OPKIT_EMU_RUNTIME_EXTERN
#define OPKIT_EMU_RT_DEFS 0
#else
#define OPKIT_EMU_RT_DEFS 1
#endif

// The runtime object's flavour as a symbol name, spelled from the macros the runtime code reads: the chip
// (OPKIT_CHIP_ASCEND310P: kChip, __NPU_ARCH__: kIs310P), auto-sync (OPKIT_EMU_NO_AUTO_SYNC: hazard.h kAutoSync), the naive-AMP bf16 math
// (OPKIT_EMU_ALLOW_BF16_MATH: kAllowBf16Math) and the F16C casts (cast.h OPKIT_EMU_F16C). The object defines it,
// every EXTERN translation unit references it, both hidden: a module compiled for another flavour than the object
// it is linked with fails to link, naming the flavour it wanted (undefined hidden symbol), instead of running the
// other flavour's rules. A macro the runtime starts to read belongs in this name.
#ifdef OPKIT_CHIP_ASCEND310P
#define OPKIT_EMU_RT_FLAVOUR_CHIP ascend310p
#else
#define OPKIT_EMU_RT_FLAVOUR_CHIP ascend910b
#endif
#ifdef OPKIT_EMU_NO_AUTO_SYNC
#define OPKIT_EMU_RT_FLAVOUR_SYNC nosync
#else
#define OPKIT_EMU_RT_FLAVOUR_SYNC autosync
#endif
#ifdef OPKIT_EMU_ALLOW_BF16_MATH
#define OPKIT_EMU_RT_FLAVOUR_BF16 bf16math
#else
#define OPKIT_EMU_RT_FLAVOUR_BF16 nobf16math
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(OPKIT_EMU_NO_F16C)  // the condition of cast.h's OPKIT_EMU_F16C
#define OPKIT_EMU_RT_FLAVOUR_F16C f16c
#else
#define OPKIT_EMU_RT_FLAVOUR_F16C nof16c
#endif
#define OPKIT_EMU_RT_CAT6_(a, b, c, d, e, f) a##_##b##_npu##c##_##d##_##e##_##f
#define OPKIT_EMU_RT_CAT6(a, b, c, d, e, f) OPKIT_EMU_RT_CAT6_(a, b, c, d, e, f)
#define OPKIT_EMU_RT_FLAVOUR                                                                             \
  OPKIT_EMU_RT_CAT6(opkit_emu_runtime_flavour, OPKIT_EMU_RT_FLAVOUR_CHIP, __NPU_ARCH__, OPKIT_EMU_RT_FLAVOUR_SYNC, \
                    OPKIT_EMU_RT_FLAVOUR_BF16, OPKIT_EMU_RT_FLAVOUR_F16C)
#if defined(OPKIT_EMU_RUNTIME_IMPL) || defined(OPKIT_EMU_RUNTIME_EXTERN)
extern "C" {
__attribute__((visibility("hidden"))) extern const char OPKIT_EMU_RT_FLAVOUR;
}
#endif
#ifdef OPKIT_EMU_RUNTIME_IMPL
extern "C" {
const char OPKIT_EMU_RT_FLAVOUR = 0;  // external linkage: the declaration above
}
#endif
#ifdef OPKIT_EMU_RUNTIME_EXTERN
// `used`: kept at any -O, so the reference is in every EXTERN object whatever the TU calls.
namespace {
[[gnu::used]] const char* const opkit_emu_rt_flavour_ref_ = &OPKIT_EMU_RT_FLAVOUR;
}
#endif
