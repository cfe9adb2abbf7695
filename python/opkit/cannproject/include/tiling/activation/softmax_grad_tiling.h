// Host side of CANN's SoftmaxGrad tiling (declared in asc-devkit 82b89a15 include/adv_api/activation/
// softmax_tiling.h with the rest of the SoftMax family, whose SoftMax functions opkit has in tiling/tiling_api.h):
// GetSoftMaxGradMaxTmpSize, GetSoftMaxGradMinTmpSize and SoftMaxGradTilingFunc on a ge::Shape, written after
// impl/adv_api/tiling/activation/softmax_tiling.cpp:77-90 and :373-506 (read, not copied; the A2 branch). The kernel
// runs SoftmaxGrad on the emulator (lib/activation/softmaxgrad.h). A shape that is empty, or a type size other than
// 2 / 4, gives 0 / leaves the tiling untouched with a message on stderr, as CANN's ASCENDC_HOST_ASSERT returns.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "register/tilingdata_base.h"
#include "opkit/softmax_rows.h"


namespace AscendC {
namespace softmax_grad_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kUnit = 64;
// [m, k]: the product of the leading axes and the last one
inline bool shape(const char* fn, const ge::Shape& s, uint32_t size, uint32_t& m, uint32_t& k) {
  k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
  const int64_t n = s.GetShapeSize();
  if (n <= 0 || k == 0 || (size != 2 && size != 4)) {
    std::fprintf(stderr, "[SoftmaxGrad][%s] the shape must be non-empty and dataTypeSize 2 (half) or 4 (float)\n", fn);
    return false;
  }
  m = static_cast<uint32_t>(n / k);
  return true;
}
// float work per row: half casts src, grad and dst (3 x k) plus two blocks and a repeat
inline uint32_t per_row(uint32_t k, uint32_t size, bool front) {
  const uint32_t blk = kBlk / size;
  if (size == 2) return blk * 2 + k * 3 + kUnit;
  return front ? blk + k + kUnit : blk * 2 + k + kUnit;
}
}  // namespace softmax_grad_detail

inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
  (void)isReuseSource;
  uint32_t m = 0, k = 0;
  if (!softmax_grad_detail::shape("GetSoftMaxGradMaxTmpSize", srcShape, dataTypeSize, m, k)) return 0;
  return m * softmax_grad_detail::per_row(k, dataTypeSize, isFront) * softmax_grad_detail::kFloat;
}
inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
  (void)isReuseSource;
  uint32_t m = 0, k = 0;
  if (!softmax_grad_detail::shape("GetSoftMaxGradMinTmpSize", srcShape, dataTypeSize, m, k)) return 0;
  return softmax_grad_detail::per_row(k, dataTypeSize, isFront) * softmax_grad_detail::kFloat;
}

// rows per pass as many as the work buffer holds, cut to basic blocks where the shape allows (:77-90)
template <class SoftMaxTilingT>
inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize, SoftMaxTilingT& t, const bool isFront) {
  using namespace softmax_grad_detail;
  uint32_t m = 0, k = 0;
  if (!shape("SoftMaxGradTilingFunc", srcShape, dataTypeSize, m, k)) return;
  const uint32_t blk = kBlk / dataTypeSize;
  const uint32_t fit = localWorkSpaceSize / kFloat / per_row(k, dataTypeSize, isFront);  // rows the buffer holds
  const uint32_t baseM = ::opkit::softmax_rows::rows_per_pass(fit, m, k);
  ::opkit::softmax_rows::fill(t, m, k, blk, baseM);
}
}  // namespace AscendC
