// CreateVecIndex, count form (asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/.../CreateVecIndex.md):
// dst[i] = firstValue + i for i < count, each rounded to T (the page's reference: np.arange(first, first + count,
// dtype)); A2 types int16_t, half, int32_t, float; count 0 is a no-op. Not: the level-0 forms (mask, repeatTime,
// strides), which stay a compile error.
#pragma once
#include "opkit_emu/vector.h"

namespace AscendC {
template <class T>
void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(std::is_same<T, int16_t>::value || std::is_same<T, half>::value || std::is_same<T, int32_t>::value ||
                    std::is_same<T, float>::value,
                "opkit emulator: CreateVecIndex supports int16_t, half, int32_t and float on this chip");
  if (count == 0) return;
  ApiCall(Pipe::V, "CreateVecIndex", loc).dst(dst, count).commit();
  ctx().stats.vector_elems += count;
  T* d = dst.data();
  if constexpr (std::is_integral<T>::value) {
    for (uint32_t i = 0; i < count; ++i) d[i] = static_cast<T>(static_cast<int64_t>(firstValue) + i);
  } else {
    const double f = to_f(firstValue);
    for (uint32_t i = 0; i < count; ++i) d[i] = from_f<T>(static_cast<float>(f + i));
  }
}
}  // namespace AscendC
