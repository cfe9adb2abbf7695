// CANN's lib/select/selectwithbytesmask.h (asc-devkit 82b89a15 include/adv_api/select/selectwithbytesmask.h:31-55 --
// Select with a byte mask; impl/adv_api/detail/select/selectwithbytesmask/selectwithbytesmask_impl.h:35-113 the A2
// implementation and the older names SelectWithBytesMask; page docs/zh/api/SIMD-API/高阶API/数据过滤/Select-95.md):
//   template <typename T, typename U, bool isReuseMask = true>
//   Select(dst, src0 (tensor), T src1 (scalar), mask, sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info)
//   Select(dst, T src0 (scalar), src1 (tensor), mask, sharedTmpBuffer, info)
// over [firstAxis, srcLastAxis] of src and [firstAxis, maskLastAxis] of mask (the mask's extra columns ignored):
// mask value 0 takes src0, any other value src1. T half or float; U bool, int8_t, uint8_t, int16_t, uint16_t,
// int32_t, uint32_t. A choice, no arithmetic: exact. Checked (api-argument): srcLastAxis x sizeof(T) a multiple of
// 32 bytes, maskLastAxis x sizeof(U) a multiple of 32 and of 16 elements, maskLastAxis >= srcLastAxis, the tensors
// holding firstAxis rows. sharedTmpBuffer below the implementation's minimum is tensor-bounds: 1024 bytes
// (MIN_REQUIRED_BUFFER, selectwithbytesmask_impl.h:49), plus AlignUp(src elements x sizeof(U), 32)
// (ComputeMaskExtraBufSize, selectwithbytesmask_v220_impl.h:24-27) when isReuseMask is false and the last axes
// differ. Where the axes differ and isReuseMask is true the device may rewrite the mask (Select-95.md 约束说明); the
// emulator marks the mask's bytes poison then, so a kernel that reads it again is told. Poison: a dst element is
// poison when its mask byte or the tensor element it takes is.
#pragma once
#include <vector>

#include "kernel_operator.h"

namespace AscendC {
struct SelectWithBytesMaskShapeInfo {
  SelectWithBytesMaskShapeInfo() {}
  uint32_t firstAxis = 0;
  uint32_t srcLastAxis = 0;
  uint32_t maskLastAxis = 0;
};
}  // namespace AscendC

namespace opkit_emu {
template <class U> inline constexpr bool is_bytes_mask_t =
    std::is_same<U, bool>::value || std::is_same<U, int8_t>::value || std::is_same<U, uint8_t>::value ||
    std::is_same<U, int16_t>::value || std::is_same<U, uint16_t>::value || std::is_same<U, int32_t>::value ||
    std::is_same<U, uint32_t>::value;

// reverse: the scalar is src0 (mask 0 takes the scalar), as the implementation's `reverse` template flag.
template <class T, class U, bool isReuseMask, bool reverse>
void select_bytes_mask(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, T scalar,
                       const AscendC::LocalTensor<U>& mask, const AscendC::LocalTensor<uint8_t>& tmp,
                       const AscendC::SelectWithBytesMaskShapeInfo& info, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: Select (byte mask) supports half and float");
  static_assert(is_bytes_mask_t<U>, "opkit emulator: Select (byte mask) masks are bool, int8_t, uint8_t, int16_t, "
                                    "uint16_t, int32_t or uint32_t");
  const char* api = "Select";
  const uint32_t rows = info.firstAxis, sc = info.srcLastAxis, mc = info.maskLastAxis;
  if (rows == 0 || sc == 0 || sc * sizeof(T) % kBlk || mc * sizeof(U) % kBlk || mc % 16 || mc < sc)
    fail("api-argument", api, loc,
         strf("info firstAxis %u, srcLastAxis %u, maskLastAxis %u: the src last axis must be 32-byte aligned, the "
              "mask's 32-byte aligned, a multiple of 16 elements and no shorter than src's", rows, sc, mc));
  const uint64_t n = uint64_t(rows) * sc, nm = uint64_t(rows) * mc;
  if (src.GetSize() < n || dst.GetSize() < n || mask.GetSize() < nm)
    fail("api-argument", api, loc,
         strf("firstAxis x srcLastAxis = %llu, firstAxis x maskLastAxis = %llu, but the src tensor holds %u, dst %u "
              "and mask %u elements", (unsigned long long)n, (unsigned long long)nm, src.GetSize(), dst.GetSize(),
              mask.GetSize()));
  uint64_t need = 1024;
  if (!isReuseMask && sc != mc) need += (uint64_t(src.GetSize()) * sizeof(U) + kBlk - 1) / kBlk * kBlk;
  if (tmp.GetSize() < need)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %llu bytes the implementation requires (1024%s)",
              tmp.GetSize(), (unsigned long long)need,
              need > 1024 ? " + the mask copy, isReuseMask false with unequal last axes" : ""));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dst").src(src, n, "src").src(mask, nm, "mask").dst(tmp, tmp.GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.resize(n);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t k = 0; k < sc; ++k)
        bad[r * sc + k] = ApiCall::lane_poisoned(c.operand(2), uint64_t(r) * mc + k) ||
                          ApiCall::lane_poisoned(c.operand(1), uint64_t(r) * sc + k);
  }
  ctx().stats.vector_elems += n;
  std::vector<T> out(n);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < sc; ++k) {
      const bool zero = mask.data()[uint64_t(r) * mc + k] == U{};
      const T t = src.data()[uint64_t(r) * sc + k];
      out[uint64_t(r) * sc + k] = reverse ? (zero ? scalar : t) : (zero ? t : scalar);
    }
  for (uint64_t i = 0; i < n; ++i) dst.data()[i] = out[i];
  for (uint64_t i = 0; i < n; ++i) shadow_fill(dst.m_.ub_off() + uint32_t(i * sizeof(T)), sizeof(T), bad.empty() || !bad[i]);
  shadow_fill(tmp.m_.ub_off(), tmp.m_.bytes, false);  // scratch: what the implementation leaves there is not defined
  if (isReuseMask && sc != mc) shadow_fill(mask.m_.ub_off(), uint32_t(nm * sizeof(U)), false);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, typename U, bool isReuseMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, T src1, const LocalTensor<U>& mask,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info, OPKIT_LOC) {
  opkit_emu::select_bytes_mask<T, U, isReuseMask, false>(dst, src0, src1, mask, sharedTmpBuffer, info, loc);
}
template <typename T, typename U, bool isReuseMask = true>
void Select(const LocalTensor<T>& dst, T src0, const LocalTensor<T>& src1, const LocalTensor<U>& mask,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info, OPKIT_LOC) {
  opkit_emu::select_bytes_mask<T, U, isReuseMask, true>(dst, src1, src0, mask, sharedTmpBuffer, info, loc);
}
// The older name (impl/adv_api/detail/select/selectwithbytesmask/selectwithbytesmask_impl.h:96-111).
template <typename T, typename U, bool isReuseMask = true>
void SelectWithBytesMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, T src1, const LocalTensor<U>& mask,
                         const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info,
                         OPKIT_LOC) {
  opkit_emu::select_bytes_mask<T, U, isReuseMask, false>(dst, src0, src1, mask, sharedTmpBuffer, info, loc);
}
template <typename T, typename U, bool isReuseMask = true>
void SelectWithBytesMask(const LocalTensor<T>& dst, T src0, const LocalTensor<T>& src1, const LocalTensor<U>& mask,
                         const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info,
                         OPKIT_LOC) {
  opkit_emu::select_bytes_mask<T, U, isReuseMask, true>(dst, src1, src0, mask, sharedTmpBuffer, info, loc);
}
}  // namespace AscendC
