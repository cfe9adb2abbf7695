// opkit's AscendC CPU emulator: the kernel-side API (a faithful subset of CANN's kernel_operator.h).
// Which APIs exist, and the rules they enforce: docs/emulator.md. Everything below is one include root
// (this directory); opkit_emu/ holds the implementation, one header per area, named by what it holds.
#pragma once
#include <cstddef>
#include <cstdint>
// The C math library, as CANN's CPU-debug build gives a kernel (impl/utils/std/cmath/sqrt.h includes <cmath> under
// ASCENDC_CPU_DEBUG): kernels call std::sqrt / expf without including it. The emulator's own headers do not need it
// (opkit_emu/host_math.h). -DOPKIT_EMU_NO_CMATH leaves it out, as a device build does, for a kernel whose entry is
// named like a C math function (msopgen's `erf`, `atanh`, `round`: they clash with <cmath>'s declarations).
#ifndef OPKIT_EMU_NO_CMATH
#include <cmath>
#endif

#include "opkit_emu/config.h"          // chip profile, CPU-debug qualifiers (__aicore__, __gm__, GM_ADDR)
#include "opkit_emu/types.h"           // half, bfloat16_t
#include "kernel_type.h"               // DT_* / FORMAT_* ids, as CANN's kernel_operator.h includes it
#include "opkit_emu/runtime.h"         // per-block state, rule violations
#include "opkit_emu/utils.h"           // DivCeil / AlignUp, likely, float16_t
#include "opkit_emu/std_utils.h"       // AscendC::Std (type traits, tuple, min / max)
#include "opkit_emu/device_builtins.h" // min / max at global scope, as the device compiler declares them
#include "opkit_emu/core_info.h"       // GetBlockIdx, block_idx, g_coreType, KernelMode
#include "opkit_emu/debug.h"           // ASSERT, ascendc_assert, printf
#include "opkit_emu/tensor.h"          // LocalTensor, GlobalTensor, TPosition
#include "opkit_emu/tpipe.h"           // TPipe, TQue, TQueBind, TBuf, HardEvent
#include "opkit_emu/datacopy.h"        // DataCopy, DataCopyPad, SetAtomicAdd
#include "opkit_emu/datacopy_enhanced.h"  // DataCopy with DataCopyEnhancedParams (the basic copy on A2)
#include "opkit_emu/datacopy_raw.h"    // DataCopyGM2UBImpl, DataCopyUB2GMImpl, DataCopyPad*Impl (pointer forms)
#include "opkit_emu/datacopy_slice.h"  // DataCopy with SliceInfo (multi-dimensional slices, GM <-> UB)
#include "opkit_emu/vector.h"          // level-2 (count form) vector instructions
#include "opkit_emu/cast.h"            // Cast
#include "opkit_emu/reduce.h"          // ReduceSum / ReduceMax / ReduceMin (count form)
#include "opkit_emu/sync.h"            // PipeBarrier, SetFlag / WaitFlag, set_flag / wait_flag, TQueSync
#include "opkit_emu/level0.h"          // level-0 forms, masks, Brcb
#include "opkit_emu/reduce_level0.h"   // WholeReduce / BlockReduce / PairReduce
#include "opkit_emu/reduce_raw.h"      // BlockReduce*IntrinsicsImpl, PairReduceSumIntrinsicsImpl (pointer forms)
#include "opkit_emu/reduce_repeats.h"   // ReduceSum / ReduceMax / ReduceMin, level-0 form
#include "opkit_emu/vec_index.h"        // CreateVecIndex (count and level-0 forms)
#include "opkit_emu/vec_copy.h"         // Copy (UB to UB, level-0)
#include "opkit_emu/bitwise.h"         // And / Or / Not / ShiftLeft / ShiftRight
#include "opkit_emu/compare_select.h"  // Compare / Compares / Select
#include "opkit_emu/gather.h"          // Gather, GatherMask
#include "opkit_emu/fused.h"           // Axpy, FusedMulAdd, MulAddDst, AddRelu, SubRelu
#include "opkit_emu/level0_mixed.h"    // level-0 Cast and compound forms (operands of two element types)
#include "opkit_emu/scalar_convert.h"  // IsSameType, SupportType, ToFloat / ToBfloat16
#include "opkit_emu/scalar.h"          // scalar bit helpers, scalar Cast, NumericLimits
#include "opkit_emu/local_mem_allocator.h"  // LocalMemAllocator, Hardware
#include "opkit_emu/ascendc_utils.h"     // AscendCUtils
#include "opkit_emu/system.h"          // system registers, caches, task hooks (GetCtrlSpr, Trap, ...)
#include "opkit_emu/gm_init.h"         // InitOutput
#include "opkit_emu/list_tensor.h"     // ListTensorDesc, TensorDesc
#include "opkit_emu/ib_sync.h"         // IBSet / IBWait (a GM flag between two blocks)
#include "opkit_emu/group_barrier.h"   // GroupBarrier (GM counters between groups of vector blocks)
#include "opkit_emu/dump_tensor.h"     // DumpTensor, DumpAccChkPoint
#include "opkit_emu/transpose.h"       // TransDataTo5HD, Transpose
#include "opkit_emu/sort.h"            // Sort32, MrgSort, Sort, Concat, Extract
#include "opkit_emu/topk_constants.h"   // the TopK implementation's global constants (SIXTEEN, EIGHT, ...)
#include "opkit_emu/unsupported.h"     // cube-side and non-A2 names: a clear compile error
#include "opkit_emu/constants.h"       // ONE_BLK_SIZE, ...
#include "opkit_emu/tiling_macros.h"   // GET_TILING_DATA, TILING_KEY_IS
#include "opkit_emu/adv_softmax.h"     // SoftMax (advanced API), SoftMaxTiling and the other tiling structs
#include "adv_api/kernel_api.h"        // the advanced API's math library (lib/math/*.h), as CANN's kernel_operator.h
#include "opkit_emu/launch.h"          // module ABI, ICPU_RUN_KF
#include "opkit_emu/hot_instances.h"   // the commonest element loops: once in the runtime object

// Samples written for the first CANN releases (2023) use namespace tik2 for what is now AscendC.
namespace tik2 {
using namespace AscendC;
}  // namespace tik2
