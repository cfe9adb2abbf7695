// CANN's pointer-level group reductions, which kernels reach through kernel_operator.h and call directly
// (ops-transformer moe_gating_top_k_softmax{,_v2} *_perf.h): BlockReduceSum/Max/MinIntrinsicsImpl and
// PairReduceSumIntrinsicsImpl (asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h:27-57,
// included on A2 by impl/basic_api/kernel_operator_vec_reduce_intf_impl.h:31-32 <- include/basic_api/
// kernel_operator_vec_reduce_intf.h:208 <- kernel_operator_intf.h:43). Each is the bare instruction (vcgadd, vcgmax,
// vcgmin, vcpadd) under the mask already in the register: here the tensor form with isSetMask=false on the UB
// buffers the pointers name (opkit_emu::ub_view), so its checks and the counter / normal mask modes apply unchanged.
#pragma once
#include "opkit_emu/datacopy_raw.h"
#include "opkit_emu/reduce_level0.h"

#define OPKIT_EMU_GROUP_RAW(NAME, KIND, GROUP)                                                                    \
  template <typename T>                                                                                          \
  void NAME(__ubuf__ T* dstLocal, __ubuf__ T* srcLocal, const int32_t repeatTime, const int32_t dstRepStride,      \
            const int32_t srcBlkStride, const int32_t srcRepStride, OPKIT_LOC) {                                 \
    using namespace opkit_emu;                                                                                   \
    static_assert(is_red0_t<T>, "opkit emulator: " #NAME " supports half and float on this chip");              \
    group_reduce<T, KIND, GROUP>(VecOp::Other, #NAME, false, ub_view(dstLocal, #NAME, loc),                      \
                                 ub_view(srcLocal, #NAME, loc), MaskArg(uint64_t(0)), repeatTime, dstRepStride,   \
                                 srcBlkStride, srcRepStride, loc);                                               \
  }

namespace AscendC {
OPKIT_EMU_GROUP_RAW(BlockReduceSumIntrinsicsImpl, RKind::Sum, (32 / sizeof(T)))
OPKIT_EMU_GROUP_RAW(BlockReduceMaxIntrinsicsImpl, RKind::Max, (32 / sizeof(T)))
OPKIT_EMU_GROUP_RAW(BlockReduceMinIntrinsicsImpl, RKind::Min, (32 / sizeof(T)))
OPKIT_EMU_GROUP_RAW(PairReduceSumIntrinsicsImpl, RKind::Sum, 2)
}  // namespace AscendC
#undef OPKIT_EMU_GROUP_RAW
