// The advanced API's math library, vector side (CANN's lib/math/*.h; asc-devkit 82b89a15 include/adv_api/math/):
// the element-wise engine every family header (lib/math/<family>.h) instantiates, and the temporary-buffer contract.
//
// What CANN does (read, not copied): each API computes on the vector unit in chunks through a work buffer, either the
// caller's `sharedTmpBuffer` (LocalTensor<uint8_t>) or one the framework pops off the UB stack. The host tells the
// caller how big it must be: GetXxxMaxMinTmpSize(shape, typeSize, isReuseSource, max, min)
// (impl/adv_api/tiling/math/<family>_tiling*.cpp). `min` is a per-type factor times one 256-byte repeat; a buffer
// below `min` cannot hold one chunk, so the device computes garbage or overruns it. Here:
//  - a sharedTmpBuffer smaller than CANN's `min` for the call's T / isReuseSource is rule `tensor-bounds`, naming the
//    API, the size and GetXxxMaxMinTmpSize (as Transpose's tmp check);
//  - the buffer is written (its contents after the call are defined but meaningless, as CANN leaves intermediates);
//  - the result is the host libm's float function of each element, rounded to T (half: computed in float). CANN's
//    kernels use polynomial / Taylor approximations documented only by example; they differ from libm in the last
//    bits (half) or a few ulp (float): the paired tests (tests/emulator/test_adv_math.py) compare with PyTorch within
//    the precision the pages' examples show, never bitwise.
//  - poison flows lane by lane (lane i of dst from lane i of each source), as for the basic element-wise APIs.
#pragma once
#include "opkit_emu/host_math.h"
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "opkit_emu/api_call.h"
#include "opkit_emu/tensor.h"
#include "opkit_emu/vector.h"

namespace opkit_emu {

template <class T>
inline constexpr bool is_adv_float_t = std::is_same<T, half>::value || std::is_same<T, float>::value;

// CANN's minimum sharedTmpBuffer for one API, in bytes: factors of one 256-byte repeat per element type
struct AdvTmp {
  uint32_t f32, f32_reuse, f16;  // bytes for float, float with isReuseSource, half
};
template <class T>
inline uint32_t adv_min_tmp(AdvTmp m, bool reuse) {
  return sizeof(T) == 4 ? (reuse ? m.f32_reuse : m.f32) : m.f16;
}

inline void adv_check_tmp(const char* api, const char* sizer, const AscendC::LocalTensor<uint8_t>* tmp,
                          uint32_t min_bytes, SrcLoc loc) {
  if (tmp && tmp->GetSize() < min_bytes)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes %s gives as the minimum for this element type "
              "(the work buffer must hold at least one 256-byte chunk of every intermediate)",
              tmp->GetSize(), min_bytes, sizer));
}

// dst[i] = f(src0[i], src1[i]) for i < n; src1 may be absent (unary) or a scalar (s1 / s0 set).
template <class T, class F>
void adv_elementwise(const char* api, const char* sizer, const AscendC::LocalTensor<T>& dst,
                     const AscendC::LocalTensor<T>* src0, const AscendC::LocalTensor<T>* src1,
                     const AscendC::LocalTensor<uint8_t>* tmp, uint32_t n, uint32_t min_tmp, F f, SrcLoc loc) {
  adv_check_tmp(api, sizer, tmp, min_tmp, loc);
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dstTensor");
  if (src0) c.src(*src0, n, src1 ? "src0Tensor" : "srcTensor");
  if (src1) c.src(*src1, n, "src1Tensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be a source) is written
    bad.assign(n, 0);
    for (int k = 1; k < c.size(); ++k) {
      const Operand& o = c.operand(k);
      if (o.write) continue;
      for (uint32_t i = 0; i < n; ++i) bad[i] |= ApiCall::lane_poisoned(o, i);
    }
  }
  ctx().stats.vector_elems += n;
  T* d = dst.data();
  const T* a = src0 ? src0->data() : nullptr;
  const T* b = src1 ? src1->data() : nullptr;
  for (uint32_t i = 0; i < n; ++i) d[i] = f(a ? a[i] : T{}, b ? b[i] : T{});
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  if (bad.empty()) {
    shadow_fill(dst.m_.ub_off(), static_cast<uint32_t>(uint64_t(n) * sizeof(T)), true);
  } else {
    for (uint32_t i = 0; i < n; ++i)
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(i * sizeof(T)), sizeof(T), !bad[i]);
  }
}

template <class T, class F>
void adv_unary(const char* api, const char* sizer, const AscendC::LocalTensor<T>& dst,
               const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp, uint32_t n,
               uint32_t min_tmp, F f, SrcLoc loc) {
  adv_elementwise<T>(api, sizer, dst, &src, nullptr, tmp, n, min_tmp,
                     [&](T x, T) { return from_f<T>(f(to_f(x))); }, loc);
}

}  // namespace opkit_emu

// One unary family on the vector side: the four forms CANN declares (sharedTmpBuffer with and without calCount,
// framework buffer with and without calCount), template <typename T, bool isReuseSource = false>, half and float.
// FN is a float -> float expression of `x`; TMP the AdvTmp minimum; SIZER the host function that reports it.
#define OPKIT_EMU_ADV_UNARY_TMP_FORMS(NAME, SIZER, TMP, FN)                                                          \
  namespace AscendC {                                                                                                \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                        \
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPKIT_LOC) {                       \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float on this chip"); \
    ::opkit_emu::adv_unary<T>(#NAME, SIZER, dstTensor, srcTensor, &sharedTmpBuffer, calCount,                        \
                              ::opkit_emu::adv_min_tmp<T>(TMP, isReuseSource), [](float x) { return FN; }, loc);     \
  }                                                                                                                  \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount, OPKIT_LOC) {  \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float on this chip"); \
    ::opkit_emu::adv_unary<T>(#NAME, SIZER, dstTensor, srcTensor, nullptr, calCount, 0, [](float x) { return FN; },  \
                              loc);                                                                                  \
  }                                                                                                                  \
  template <typename T, bool isReuseSource = false, OPKIT_NOLOC>                                                     \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                        \
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPKIT_NOLOC_PARAM) {               \
    NAME<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, calCount, OPKIT_PTR_LOC);                          \
  }                                                                                                                  \
  template <typename T, bool isReuseSource = false, OPKIT_NOLOC>                                                     \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,               \
            OPKIT_NOLOC_PARAM) {                                                                                     \
    NAME<T, isReuseSource>(dstTensor, srcTensor, calCount, OPKIT_PTR_LOC);                                           \
  }                                                                                                                  \
  }
#define OPKIT_EMU_ADV_UNARY_WHOLE_FORMS(NAME)                                                                        \
  namespace AscendC {                                                                                                \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                        \
            const LocalTensor<uint8_t>& sharedTmpBuffer, OPKIT_LOC) {                                                \
    NAME<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize(), loc);                         \
  }                                                                                                                  \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, OPKIT_LOC) {                           \
    NAME<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize(), loc);                                          \
  }                                                                                                                  \
  }
#define OPKIT_EMU_ADV_UNARY(NAME, SIZER, TMP, FN)   \
  OPKIT_EMU_ADV_UNARY_TMP_FORMS(NAME, SIZER, TMP, FN) \
  OPKIT_EMU_ADV_UNARY_WHOLE_FORMS(NAME)
