// CANN's lib/activation/swiglu.h (asc-devkit 82b89a15 include/adv_api/activation/swiglu.h:21-55; page
// docs/zh/api/SIMD-API/高阶API/激活函数/SwiGLU接口/SwiGLU.md): template <typename T, bool isReuseSource = false>
// SwiGLU(dst, src0, src1, const float& beta, [sharedTmpBuffer,] [calCount]) -- the four forms, dst a non-const
// reference as CANN declares it -- half and float: dst = src0 * Swish(src1), Swish(x) = x / (1 + exp(-beta x)),
// half cast to float first (impl/adv_api/detail/activation/swiglu/swiglu_common_impl.h:126-180). src0 and src1 must
// be the same size (:85-87, api-argument). Minimum sharedTmpBuffer: float 0, half 6 x 256 bytes
// (impl/adv_api/tiling/activation/swiglu_tiling.cpp:8-25, GetSwiGLUMaxMinTmpSize). Computed in float, rounded to T.
#pragma once
#include "lib/activation/geglu.h"  // opkit_emu::glu_call

namespace opkit_emu {
inline float swiglu_gate(float x, float beta) { return x / (1.0f + hm::exp(-beta * x)); }
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false>
void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
            const float& scalarValue, const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount,
            OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: SwiGLU supports half and float (SwiGLU.md)");
  ::opkit_emu::glu_call<T>("SwiGLU", "GetSwiGLUMaxMinTmpSize", dstTensor, srcTensor0, srcTensor1, &sharedTmpBuffer,
                           calCount, sizeof(T) == 4 ? 0 : 1536, ::opkit_emu::swiglu_gate, scalarValue, loc);
}
template <typename T, bool isReuseSource = false>
void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
            const float& scalarValue, const uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: SwiGLU supports half and float (SwiGLU.md)");
  ::opkit_emu::glu_call<T>("SwiGLU", "GetSwiGLUMaxMinTmpSize", dstTensor, srcTensor0, srcTensor1, nullptr, calCount, 0,
                           ::opkit_emu::swiglu_gate, scalarValue, loc);
}
template <typename T, bool isReuseSource = false>
void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
            const float& scalarValue, const LocalTensor<uint8_t>& sharedTmpBuffer, OPKIT_LOC) {
  SwiGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, scalarValue, sharedTmpBuffer, srcTensor0.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
void SwiGLU(LocalTensor<T>& dstTensor, LocalTensor<T>& srcTensor0, LocalTensor<T>& srcTensor1, const float& scalarValue,
            OPKIT_LOC) {
  SwiGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, scalarValue, srcTensor0.GetSize(), loc);
}
}  // namespace AscendC
