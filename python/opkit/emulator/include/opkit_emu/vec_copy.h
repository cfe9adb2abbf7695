// Copy, the UB-to-UB level-0 copy on the vector unit (asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/数据搬运/
// Copy（UBToUB掩码式高维数据搬运）.md): mask + repeatTime + CopyRepeatParams {dstStride, srcStride (DataBlocks
// within a repeat), dstRepeatSize, srcRepeatSize (DataBlocks between repeats)}; A2 types int16_t, uint16_t, half,
// bfloat16_t, int32_t, uint32_t, float. Masked-off lanes keep their value; poison moves lane by lane.
#pragma once
#include "opkit_emu/level0.h"

namespace AscendC {
struct CopyRepeatParams {
  CopyRepeatParams() {}
  CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn, uint16_t dstRepeatSizeIn, uint16_t srcRepeatSizeIn)
      : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn), srcRepeatSize(srcRepeatSizeIn) {}
  uint16_t dstStride = 1;  // DEFAULT_DATA_COPY_STRIDE
  uint16_t srcStride = 1;
  uint16_t dstRepeatSize = 8;  // DEFAULT_REPEAT_STRIDE
  uint16_t srcRepeatSize = 8;
};
}  // namespace AscendC

namespace opkit_emu {
template <class T>
void vec_copy(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, MaskArg m, uint8_t repeat,
              const AscendC::CopyRepeatParams& rp, bool setMask, SrcLoc loc) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "opkit emulator: Copy supports 16- and 32-bit types on this chip");
  if (rp.dstRepeatSize > 4095 || rp.srcRepeatSize > 4095)
    fail("vector-mask", "Copy", loc,
         strf("dstRepeatSize %u / srcRepeatSize %u: the page allows [0, 4095]", rp.dstRepeatSize, rp.srcRepeatSize));
  const L0Plan p = l0_plan<T>(setMask, m, repeat, "Copy", loc);
  l0_apply<T, 1>(VecOp::Other, "Copy", dst, L0Geom{rp.dstStride, rp.dstRepeatSize}, {&src},
                 {L0Geom{rp.srcStride, rp.srcRepeatSize}}, p, [](T x) { return x; }, loc);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime,
          const CopyRepeatParams& repeatParams, OPKIT_LOC) {
  opkit_emu::vec_copy<T>(dst, src, opkit_emu::mask_bits(mask, opkit_emu::kLanes<T>), repeatTime, repeatParams, isSetMask, loc);
}
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime,
          const CopyRepeatParams& repeatParams, OPKIT_LOC) {
  opkit_emu::vec_copy<T>(dst, src, opkit_emu::MaskArg(mask), repeatTime, repeatParams, isSetMask, loc);
}
}  // namespace AscendC
