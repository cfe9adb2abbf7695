// CANN's lib/index/arithprogression.h (asc-devkit 82b89a15 include/adv_api/index/arithprogression.h; page
// docs/zh/api/SIMD-API/高阶API/索引计算/Arange-94.md): Arange(dst, firstValue, diffValue, count) and its older name
// ArithProgression, int16_t / half / int32_t / float on A2, count > 0.
// The values are built as CANN's A2 code builds them (impl/adv_api/detail/index/arithprogression/
// arithprogression_common_impl.h:22-110), so rounding matches: the first 32-byte block by the scalar unit (half: in
// float, rounded once), each further block an Adds in T of the block before plus diff x (block length), and past the
// first 256 bytes each repeat an Adds of the repeat before plus diff x (repeat length). The last block is written
// whole (CANN's tail mask rounds up to a block), so dst gets count rounded up to 32 bytes -- but never past the
// tensor's end here (what the device writes after a tensor that holds only count elements is not modelled).
#pragma once
#include "kernel_operator.h"
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
template <class T>
inline constexpr bool is_arange_t = std::is_same<T, int16_t>::value || std::is_same<T, half>::value ||
                                    std::is_same<T, int32_t>::value || std::is_same<T, float>::value;

template <class T>
T arange_add(T a, T s) {
  if constexpr (std::is_integral<T>::value) return static_cast<T>(static_cast<int64_t>(a) + static_cast<int64_t>(s));
  else return from_f<T>(to_f(a) + to_f(s));
}
template <class T>
T arange_step(T diff, int32_t n) {  // GetArithProgressionStep: integers in int64, the rest in float
  if constexpr (std::is_integral<T>::value) return static_cast<T>(static_cast<int64_t>(diff) * n);
  else return from_f<T>(to_f(diff) * static_cast<float>(n));
}

template <class T>
void arange(const char* api, const AscendC::LocalTensor<T>& dst, T first, T diff, int32_t count, SrcLoc loc) {
  static_assert(is_arange_t<T>, "opkit emulator: Arange / ArithProgression support int16_t, half, int32_t and float "
                                "on this chip");
  if (count <= 0) fail("api-argument", api, loc, strf("count %d; Arange-94.md: count > 0", count));
  constexpr uint32_t B = 32 / sizeof(T), R = 256 / sizeof(T);
  const uint32_t want = static_cast<uint32_t>(count);
  const uint32_t n = want > B ? std::min<uint32_t>((want + B - 1) / B * B, std::max(dst.GetSize(), want)) : want;
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, want, "dst");  // count elements must fit (the page: dst >= count * sizeof(T))
  c.commit(Flow::Manual);
  std::vector<T> v(n);
  for (uint32_t i = 0; i < std::min(n, B); ++i) {
    if constexpr (std::is_same<T, half>::value) v[i] = from_f<T>(to_f(first) + to_f(diff) * static_cast<float>(i));
    else v[i] = static_cast<T>(first + diff * static_cast<T>(i));
  }
  if (want > B) {
    const uint32_t blocks_end = want > R ? R : n;  // blocks 1..7 (or to the end) from the block before
    for (uint32_t i = B; i < blocks_end; ++i) v[i] = arange_add(v[i - B], arange_step(diff, B));
    if (want > R)
      for (uint32_t i = R; i < n; ++i) v[i] = arange_add(v[i - R], arange_step(diff, R));
  }
  std::copy(v.begin(), v.end(), dst.data());
  ctx().stats.vector_elems += n;
  shadow_fill(dst.m_.ub_off(), static_cast<uint32_t>(n * sizeof(T)), true);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T>
void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count, OPKIT_LOC) {
  ::opkit_emu::arange<T>("Arange", dst, firstValue, diffValue, count, loc);
}
template <typename T>
void ArithProgression(const LocalTensor<T>& dstLocal, const T firstValue, const T diffValue, const int32_t count,
                      OPKIT_LOC) {
  ::opkit_emu::arange<T>("ArithProgression", dstLocal, firstValue, diffValue, count, loc);
}
}  // namespace AscendC
