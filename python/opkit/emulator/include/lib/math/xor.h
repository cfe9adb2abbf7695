// CANN's lib/math/xor.h (asc-devkit 82b89a15 include/adv_api/math/xor.h:20-70; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Xor接口/Xor-82.md): template <typename T, bool isReuseSource = false>
// Xor(dst, src0, src1, [sharedTmpBuffer,] [calCount]) -- the four forms -- int16_t and uint16_t (Xor-82.md:87):
// bitwise exclusive or, exact (impl/adv_api/detail/math/xor/xor_membase_impl.h:35-80 builds it from Or / And / Not).
// Minimum sharedTmpBuffer: 256 bytes (impl/adv_api/tiling/math/xor_tiling.cpp:17-24, GetXorMaxMinTmpSize).
#pragma once
#include <type_traits>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
template <typename T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPKIT_LOC) {
  static_assert(std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value,
                "opkit emulator: Xor supports int16_t and uint16_t (Xor-82.md)");
  ::opkit_emu::adv_elementwise<T>("Xor", "GetXorMaxMinTmpSize", dstTensor, &src0Tensor, &src1Tensor, &sharedTmpBuffer,
                                  calCount, 256, [](T a, T b) { return static_cast<T>(a ^ b); }, loc);
}
template <typename T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         const uint32_t calCount, OPKIT_LOC) {
  static_assert(std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value,
                "opkit emulator: Xor supports int16_t and uint16_t (Xor-82.md)");
  ::opkit_emu::adv_elementwise<T>("Xor", "GetXorMaxMinTmpSize", dstTensor, &src0Tensor, &src1Tensor, nullptr, calCount,
                                  0, [](T a, T b) { return static_cast<T>(a ^ b); }, loc);
}
template <typename T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         const LocalTensor<uint8_t>& sharedTmpBuffer, OPKIT_LOC) {
  Xor<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, sharedTmpBuffer, src0Tensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
         OPKIT_LOC) {
  Xor<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, src0Tensor.GetSize(), loc);
}
}  // namespace AscendC
