// The emulator's commonest element loops (OPKIT_EMU_HOT templates: vector.h, reduce.h, cast.h) instantiated once in
// the runtime object (OPKIT_EMU_RUNTIME_IMPL: explicit instantiation definitions) and only declared in every kernel
// module (OPKIT_EMU_RUNTIME_EXTERN: `extern template`), instead of generated again at O3 in each module: ~0.2
// CPU-seconds of a LayerNorm module's compile was these loops for float (a hand probe, g++ 12: 26 float loops
// instantiated at O3 in a unit of their own; docs/emulator.md has the module figures). They are
// noinline, so a module only calls them; the runtime object is compiled with the module's own flags (the flavour:
// cmake/opkit_emulator.cmake), so the code is the one each module generated before -- unless a module is given
// compiler options of its own, which the flavour symbol does not see (docs/emulator.md). Header-only builds
// (`opkit cflags`): nothing here, every loop is instantiated where used as before.
// A loop not listed is instantiated in the module as before; list one here when many kernels use it.
#pragma once

#if defined(OPKIT_EMU_RUNTIME_IMPL) || defined(OPKIT_EMU_RUNTIME_EXTERN)
#ifdef OPKIT_EMU_RUNTIME_EXTERN
#define OPKIT_EMU_HOT_INST extern template
#else
#define OPKIT_EMU_HOT_INST template
#endif

namespace opkit_emu {
// bin_loop / scalar_loop / un_loop (vector.h) pick one of these per aliasing pattern at run time: all of them.
#define OPKIT_EMU_HOT_BIN(Op, T)                                              \
  OPKIT_EMU_HOT_INST void bin_loop_distinct<Op, T>(T*, const T*, const T*, uint32_t); \
  OPKIT_EMU_HOT_INST void bin_loop_dst_is_a<Op, T>(T*, const T*, uint32_t);           \
  OPKIT_EMU_HOT_INST void bin_loop_dst_is_b<Op, T>(T*, const T*, uint32_t);           \
  OPKIT_EMU_HOT_INST void bin_loop_all_same<Op, T>(T*, uint32_t);                     \
  OPKIT_EMU_HOT_INST void bin_loop_any<Op, T>(T*, const T*, const T*, uint32_t);
#define OPKIT_EMU_HOT_SCALAR(Op, T)                                              \
  OPKIT_EMU_HOT_INST void scalar_loop_distinct<Op, T>(T*, const T*, T, uint32_t); \
  OPKIT_EMU_HOT_INST void scalar_loop_inplace<Op, T>(T*, T, uint32_t);            \
  OPKIT_EMU_HOT_INST void scalar_loop_any<Op, T>(T*, const T*, T, uint32_t);
#define OPKIT_EMU_HOT_UN(Op, T)                                        \
  OPKIT_EMU_HOT_INST void un_loop_distinct<Op, T>(T*, const T*, uint32_t); \
  OPKIT_EMU_HOT_INST void un_loop_inplace<Op, T>(T*, uint32_t);            \
  OPKIT_EMU_HOT_INST void un_loop_any<Op, T>(T*, const T*, uint32_t);
// The float compute of every normalisation / activation kernel; in the naive flavour (which computes in the I/O
// dtype) the same loops in half and bfloat16_t too.
#define OPKIT_EMU_HOT_TYPE(T)                                                                              \
  OPKIT_EMU_HOT_BIN(OpAdd, T) OPKIT_EMU_HOT_BIN(OpSub, T) OPKIT_EMU_HOT_BIN(OpMul, T)                       \
  OPKIT_EMU_HOT_BIN(OpDiv, T) OPKIT_EMU_HOT_BIN(OpMax, T) OPKIT_EMU_HOT_BIN(OpMin, T)                       \
  OPKIT_EMU_HOT_SCALAR(OpAdd, T) OPKIT_EMU_HOT_SCALAR(OpMul, T)                                             \
  OPKIT_EMU_HOT_SCALAR(OpMax, T) OPKIT_EMU_HOT_SCALAR(OpMin, T)                                             \
  OPKIT_EMU_HOT_UN(OpSqrt, T) OPKIT_EMU_HOT_UN(OpAbs, T) OPKIT_EMU_HOT_UN(OpExp, T) OPKIT_EMU_HOT_UN(OpLn, T) \
  OPKIT_EMU_HOT_UN(OpRelu, T)                                                                               \
  OPKIT_EMU_HOT_INST void fill_loop<T>(T*, T, uint32_t);                                                  \
  OPKIT_EMU_HOT_INST float reduce_sum_loop<T>(const T*, uint32_t);
OPKIT_EMU_HOT_TYPE(float)
#ifdef OPKIT_EMU_ALLOW_BF16_MATH  // the naive flavour's runtime object only: ~3 CPU-seconds, paid once per build tree
OPKIT_EMU_HOT_TYPE(half)
OPKIT_EMU_HOT_TYPE(bfloat16_t)
OPKIT_EMU_HOT_INST void exp_loop_fp16<half>(half*, const half*, uint32_t);
OPKIT_EMU_HOT_INST void exp_loop_fp16<bfloat16_t>(bfloat16_t*, const bfloat16_t*, uint32_t);
#endif
// Cast between float and the 16-bit float types (a mixed-precision kernel's load and store).
OPKIT_EMU_HOT_INST void cast_to_float_loop_generic<half>(float*, const half*, uint32_t);
OPKIT_EMU_HOT_INST void cast_to_float_loop_generic<bfloat16_t>(float*, const bfloat16_t*, uint32_t);
OPKIT_EMU_HOT_INST void cast_generic_loop<half, float>(half*, const float*, uint32_t, AscendC::RoundMode);
OPKIT_EMU_HOT_INST void cast_generic_loop<bfloat16_t, float>(bfloat16_t*, const float*, uint32_t, AscendC::RoundMode);
#undef OPKIT_EMU_HOT_TYPE
#undef OPKIT_EMU_HOT_UN
#undef OPKIT_EMU_HOT_SCALAR
#undef OPKIT_EMU_HOT_BIN
}  // namespace opkit_emu

#undef OPKIT_EMU_HOT_INST
#endif
