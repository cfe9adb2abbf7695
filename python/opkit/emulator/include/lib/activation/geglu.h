// CANN's lib/activation/geglu.h (asc-devkit 82b89a15 include/adv_api/activation/geglu.h:19-50; page
// docs/zh/api/SIMD-API/高阶API/激活函数/GeGLU接口/GeGLU.md): template <typename T, bool isReuseSource = false>
// GeGLU(dst, src0, src1, [sharedTmpBuffer,] [calCount]) -- the four forms -- half and float:
//   dst = src0 * Gelu(src1), Gelu(x) = x / (1 + exp(-0.0713548162726 x (x^2 + 22.363860002236)))  (the tanh
//   approximation; impl/adv_api/detail/activation/geglu/geglu_common_impl.h:16-17,83-104; half in float, :107-140).
// src0 and src1 must be the same size (:47-52, api-argument). Minimum sharedTmpBuffer: float 0, half 4 x 256 bytes
// (impl/adv_api/tiling/activation/geglu_tiling.cpp:10-26, GetGeGLUMaxMinTmpSize). Computed in float, rounded to T.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
template <class T>
void glu_call(const char* api, const char* sizer, const AscendC::LocalTensor<T>& dst,
              const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>& src1,
              const AscendC::LocalTensor<uint8_t>* tmp, uint32_t n, uint32_t min_tmp, float (*gate)(float, float),
              float beta, SrcLoc loc) {
  if (src0.GetSize() != src1.GetSize())
    fail("api-argument", api, loc,
         strf("srcTensor0 holds %u elements and srcTensor1 %u: CANN requires equal sizes", src0.GetSize(),
              src1.GetSize()));
  adv_elementwise<T>(api, sizer, dst, &src0, &src1, tmp, n, min_tmp,
                     [&](T a, T b) { return from_f<T>(to_f(a) * gate(to_f(b), beta)); }, loc);
}
inline float geglu_gate(float x, float) {
  return x / (1.0f + hm::exp(-0.0713548162726f * x * (x * x + 2.2363860002236e1f)));
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: GeGLU supports half and float (GeGLU.md)");
  ::opkit_emu::glu_call<T>("GeGLU", "GetGeGLUMaxMinTmpSize", dstTensor, srcTensor0, srcTensor1, &sharedTmpBuffer,
                           calCount, sizeof(T) == 4 ? 0 : 1024, ::opkit_emu::geglu_gate, 0.0f, loc);
}
template <typename T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
           uint32_t calCount, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: GeGLU supports half and float (GeGLU.md)");
  ::opkit_emu::glu_call<T>("GeGLU", "GetGeGLUMaxMinTmpSize", dstTensor, srcTensor0, srcTensor1, nullptr, calCount, 0,
                           ::opkit_emu::geglu_gate, 0.0f, loc);
}
template <typename T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
           const LocalTensor<uint8_t>& sharedTmpBuffer, OPKIT_LOC) {
  GeGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, sharedTmpBuffer, srcTensor0.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
           OPKIT_LOC) {
  GeGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, srcTensor0.GetSize(), loc);
}
}  // namespace AscendC
