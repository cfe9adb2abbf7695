// C ABI between the torch-side library (python/opkit/csrc, links libtorch) and a kernel module (links nothing but the
// emulator headers). One module = one op x one dtype x one variant, dlopen'ed RTLD_LOCAL, so
// user kernels compiled for several dtypes never collide (same class names, different code).
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPKIT_LAUNCH_ABI_VERSION 3   // 2: + flags; 3: + arg_data_bytes
#define OPKIT_MAX_GM_ARGS 32

typedef struct opkit_launch_args {
  uint32_t abi_version;     // OPKIT_LAUNCH_ABI_VERSION
  uint32_t block_dim;       // blocks to run
  uint32_t num_args;        // GM_ADDR arguments, in kernel order: inputs, outputs, workspace, tiling
  void* args[OPKIT_MAX_GM_ARGS];
  uint64_t arg_bytes[OPKIT_MAX_GM_ARGS];  // size of each buffer, for GM bounds checks
  uint64_t tiling_key;      // ICPU_SET_TILING_KEY value
  uint32_t threads;         // host threads for blocks (0 = emulator default); results never depend on it
  uint32_t flags;           // OPKIT_LAUNCH_* bits
  // Bytes of real data at the start of each buffer (0: all of arg_bytes). The rest of arg_bytes is the allocation's
  // padding (the device allocates ALIGN_UP(n, 32) + 32): a kernel may write there (a tail's 32-byte block), and
  // poison (never-written UB) landing there is no error; read back into UB it is poison again (docs/emulator.md
  // "Data extent").
  uint64_t arg_data_bytes[OPKIT_MAX_GM_ARGS];
} opkit_launch_args;
// The launch skips the per-call rules (operand checks, pipe hazards, poison): only for a launch whose module,
// tiling and GM sizes already passed them once (docs/emulator.md "Checked once, then fast"). Outputs are
// bitwise those of a checked launch; GM bounds are still checked.
#define OPKIT_LAUNCH_FAST 1u
// With OPKIT_LAUNCH_FAST: a fast launch does not fill fresh UB buffers (their bytes are whatever the host
// worker's UB held); with this bit it fills them with 0x5A instead of the checked launch's 0xFF, so a kernel
// whose outputs depended on uninitialised UB would give other bytes (opkit's harness proves it per case).
#define OPKIT_LAUNCH_ALT_FILL 2u

typedef struct opkit_launch_stats {
  uint64_t gm_read_bytes;     // summed over blocks
  uint64_t gm_write_bytes;
  uint64_t vector_elems;      // elements processed by vector instructions
  uint64_t vector_repeats;    // 256-byte repeats issued (ceil per call), for the roofline model
  uint64_t ub_high_water;     // max over blocks of the UB bytes handed out by InitBuffer
  uint64_t max_block_gm_bytes;     // busiest block's GM traffic (read + write)
  uint64_t max_block_vector_repeats;  // busiest block's vector repeats
  uint32_t blocks;
} opkit_launch_stats;

typedef struct opkit_launch_result {
  int32_t status;           // 0 ok, 1 rule violation, 2 other error
  char rule[64];            // e.g. "ub-capacity", "ub-alignment", "datacopy-length", "gm-bounds"
  char call[64];            // e.g. "DataCopy", "TPipe::InitBuffer"
  char file[512];           // kernel source file of the call
  int32_t line;
  int32_t block;            // block index where it happened (-1 if none)
  char message[1024];       // full human message
  opkit_launch_stats stats;
} opkit_launch_result;

// Every kernel module exports these symbols: the launch, and the op's host tiling (its tiling.h,
// compiled in a translation unit of its own: python/opkit/csrc/op/kernel_tiling.cpp). opkit_tiling_run
// takes an opkit::TilingContext* (C++, opkit/tiling.h) and fills `tiling` (at least opkit_tiling_size()
// bytes, 16-byte aligned); non-zero: the tiling function threw, `error` holds what().
// An emulator module (OPKIT_EMU_DEFINE_MODULE, opkit_emu/launch.h) also exports
// `int32_t opkit_kernel_set_list_members(uint32_t arg, uint32_t n, const uint64_t* triples)`: a tensor list's
// members (offset, data bytes, allocation bytes) for argument `arg` of the thread's next launch, which consumes
// them whether it runs or is refused; non-zero: arg >= OPKIT_MAX_GM_ARGS, or triples NULL with n > 0. A member's
// data 0 is 0 bytes: an empty tensor's buffer (all padding), which arg_data_bytes' 0 ("all") cannot say, is the one
// member (0, 0, arg_bytes).
// It also exports `int32_t opkit_kernel_last_marks(uint64_t* written, uint64_t* pad_touched)`: for the thread's last
// checked launch, a bit per GM argument (1 << arg) a GM store wrote (UB->GM copies plain or atomic, DataCopyPad,
// SetValue, WriteGmByPassDCache) and one per argument an access reached past its data extent (into its padding);
// all ones (unknown) after a fast or refused launch. A module without it: assume every argument written and touched.
typedef int32_t (*opkit_kernel_last_marks_fn)(uint64_t* written, uint64_t* pad_touched);
#define OPKIT_KERNEL_LAST_MARKS_SYMBOL "opkit_kernel_last_marks"
typedef int32_t (*opkit_kernel_launch_fn)(const opkit_launch_args*, opkit_launch_result*);
#define OPKIT_KERNEL_LAUNCH_SYMBOL "opkit_kernel_launch"
#define OPKIT_TILING_SIZE_SYMBOL "opkit_tiling_size"
#define OPKIT_TILING_RUN_SYMBOL "opkit_tiling_run"

#ifdef __cplusplus
}
#endif
