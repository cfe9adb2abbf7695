// Compare (count form, bitmask output) and Select. Facts sheet §3 "Compare and Select":
// Compare's count must span a multiple of 256 bytes; dst bit i (little-endian within a byte) is
// element i's result; Select takes src0 where the mask bit is 1, src1 where it is 0.
#pragma once
#include "opkit_emu/vector.h"

namespace AscendC {
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
}  // namespace AscendC

namespace opkit_emu {
template <class T> inline constexpr bool is_cmp_t =
    std::is_same<T, half>::value || std::is_same<T, float>::value || std::is_same<T, int32_t>::value;
template <class T> inline constexpr bool is_sel_t = std::is_same<T, half>::value || std::is_same<T, float>::value;

template <class T>
OPKIT_EMU_HOT void compare_loop(uint8_t* d, const T* a, const T* b, uint32_t n, AscendC::CMPMODE m) {
  for (uint32_t byte = 0; byte < n / 8; ++byte) {
    uint8_t bits = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      using C = std::conditional_t<std::is_integral<T>::value, T, float>;  // integers compare exactly
      C x, y;
      if constexpr (std::is_integral<T>::value) { x = a[byte * 8 + k]; y = b[byte * 8 + k]; }
      else { x = to_f(a[byte * 8 + k]); y = to_f(b[byte * 8 + k]); }
      bool r;
      switch (m) {
        case AscendC::CMPMODE::LT: r = x < y; break;
        case AscendC::CMPMODE::GT: r = x > y; break;
        case AscendC::CMPMODE::EQ: r = x == y; break;
        case AscendC::CMPMODE::LE: r = x <= y; break;
        case AscendC::CMPMODE::GE: r = x >= y; break;
        default: r = x != y; break;
      }
      bits |= static_cast<uint8_t>(r) << k;
    }
    d[byte] = bits;
  }
}
// mode 0 (VSEL_CMPMASK_SPR) reuses the first `lanes` bits of the mask in every 256-byte repeat;
// modes 1 and 2 consume the mask continuously.
template <class T>
OPKIT_EMU_HOT void select_loop(T* d, const uint8_t* mask, const T* a, const T* b, T s, bool scalar, uint32_t n,
                               uint32_t wrap) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t k = wrap ? i % wrap : i;
    bool take0 = (mask[k >> 3] >> (k & 7)) & 1;
    d[i] = take0 ? a[i] : (scalar ? s : b[i]);
  }
}
}  // namespace opkit_emu

namespace AscendC {

template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_cmp_t<T>, "opkit emulator: Compare supports half, float and int32_t (EQ only) on this chip");
  static_assert(sizeof(U) == 1, "opkit emulator: Compare writes a uint8_t bitmask: dst must be LocalTensor<uint8_t>");
  if constexpr (std::is_same<T, int32_t>::value)
    if (cmpMode != CMPMODE::EQ) fail("dtype-unsupported", "Compare", loc, "int32_t Compare supports CMPMODE::EQ only");
  if (!vec_prologue<T>(VecOp::Compare, "Compare", count, loc)) return;
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (bytes % kRepeat != 0)
    fail("compare-length", "Compare", loc,
         strf("count %u x %zu bytes = %llu bytes is not a multiple of 256 bytes; the NPU would not compute the last "
              "%llu bytes",
              count, sizeof(T), (unsigned long long)bytes, (unsigned long long)(bytes % kRepeat)));
  dst.m_.check_operand(count / 8, "Compare", loc, "dst");
  src_check(src0, count, "Compare", loc, "src0");
  src_check(src1, count, "Compare", loc, "src1");
  compare_loop<T>(reinterpret_cast<uint8_t*>(dst.data()), src0.data(), src1.data(), count, cmpMode);
  dst.m_.mark_written(0, count / 8);
}

namespace detail {
template <class T, class U>
void select_impl(const LocalTensor<T>& dst, const LocalTensor<U>& mask, const LocalTensor<T>* src0, const LocalTensor<T>* src1,
                 T scalar, SELMODE mode, uint32_t count, opkit_emu::SrcLoc loc) {
  using namespace opkit_emu;
  static_assert(is_sel_t<T>, "opkit emulator: Select supports half and float on this chip");
  const bool scalar_mode = mode == SELMODE::VSEL_TENSOR_SCALAR_MODE;
  if (!scalar_mode && !src1)
    fail("dtype-unsupported", "Select", loc, "VSEL_TENSOR_TENSOR_MODE and VSEL_CMPMASK_SPR need a tensor src1");
  // mode 0 reads only the first 256/sizeof(T) mask bits, again for every repeat (Select.md)
  const uint32_t wrap = mode == SELMODE::VSEL_CMPMASK_SPR ? kRepeat / sizeof(T) : 0;
  if (!vec_prologue<T>(VecOp::Select, "Select", count, loc)) return;
  const uint32_t mask_bytes = ((wrap ? std::min(count, wrap) : count) + 7) / 8;
  mask.m_.check_operand(mask_bytes, "Select", loc, "selMask");
  mask.m_.check_initialized(0, mask_bytes, 1, "Select", loc, "selMask");
  dst_check(dst, count, "Select", loc);
  src_check(*src0, count, "Select", loc, "src0");
  if (!scalar_mode) src_check(*src1, count, "Select", loc, "src1");
  select_loop<T>(dst.data(), reinterpret_cast<const uint8_t*>(mask.data()), src0->data(),
                 scalar_mode ? nullptr : src1->data(), scalar, scalar_mode, count, wrap);
  dst_done(dst, count);
}
}  // namespace detail

template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, OPKIT_LOC) {
  detail::select_impl<T, U>(dst, selMask, &src0, &src1, T{}, selMode, count, loc);
}
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
            SELMODE selMode, uint32_t count, OPKIT_LOC) {
  detail::select_impl<T, U>(dst, selMask, &src0, nullptr, src1, selMode, count, loc);
}

}  // namespace AscendC
