// AscendCUtils: the helper class CANN's own kernels and older samples call for the vector mask register and
// a few geometry figures (mirror-cann/asc-devkit 82b89a15 impl/basic_api/kernel_utils_base.h, declared in
// AscendC, reached through kernel_operator.h). The emulator keeps the members a kernel can use on a vector
// core: GetBitSize, GetC0Size, GetC0Count, GetDefaultBlockNum, SetMask<T[, isSetMask]>(high, low) and
// SetMask<T[, isSetMask]>(len), SetMaskCount, SetMaskNorm, ResetMask<[isSetMask]>, SetOverflow (1 only). The others manage the
// chip's own registers, temporary UB and GM overflow checks inside CANN's implementation (missing here).
#pragma once
#include "opkit_emu/constants.h"
#include "opkit_emu/level0.h"

namespace AscendC {
class AscendCUtils {
 public:
  static int32_t GetBitSize(int32_t byteSize) { return byteSize * 8; }
  static int32_t GetC0Size() { return ONE_BLK_SIZE; }  // bytes of one C0 block (a DataBlock)
  // the count the last GatherMask kept (asc-devkit 82b89a15 impl/basic_api/kernel_utils_base.h:112; the register
  // dav_c220's GatherMask reads its rsvdCnt from, kernel_operator_vec_gather_mask_impl.h:54)
  static int64_t GetRsvdCnt() { return static_cast<int64_t>(opkit_emu::ctx().rsvd_cnt); }
  static int32_t GetC0Count(const int32_t dtypeSize, OPKIT_LOC) {
    if (dtypeSize == 0) opkit_emu::fail("api-argument", "AscendCUtils::GetC0Count", loc, "dtypeSize can not be 0");
    return GetC0Size() / dtypeSize;
  }
  static int32_t GetDefaultBlockNum() { return DEFAULT_BLK_NUM; }

  template <class T, bool isSetMask = true>
  static void SetMask(const uint64_t& maskHigh, const uint64_t& maskLow) {
    if constexpr (isSetMask) SetVectorMask<T>(maskHigh, maskLow);
  }
  // The first len lanes of a repeat as a bit pattern (in either mask mode): 64 -> the low word, a full
  // repeat or 128 and more -> every lane.
  template <class T, bool isSetMask = true>
  static void SetMask(int32_t len) {
    if constexpr (!isSetMask) return;
    constexpr int32_t per_repeat = static_cast<int32_t>(opkit_emu::kRepeat / sizeof(T));
    const uint64_t full = ~0ull;
    if (len == 64) return SetMask<T>(0, full);
    if (len == per_repeat || len >= 128) return SetMask<T>(full, full);
    const uint64_t hi = len > 64 ? (1ull << (len - 64)) - 1 : 0;
    const uint64_t lo = len > 64 ? full : (len <= 0 ? 0 : (1ull << len) - 1);
    SetMask<T>(hi, lo);
  }
  template <class T>
  static void SetMaskCount() { AscendC::SetMaskCount(); }
  template <class T>
  static void SetMaskNorm() { AscendC::SetMaskNorm(); }
  // CTRL[48], the float saturation mode (impl/basic_api/kernel_utils_base.h:185-197, A2): 1 sets the bit (the
  // non-saturating mode the emulator computes in), anything else clears it -- the saturating mode, recorded as
  // SetCtrlSpr<48, 48>(0) records it (opkit_emu/system.h: a later vector call on 16-bit lanes is not-emulated).
  static void SetOverflow(uint64_t ctrlValue, OPKIT_LOC) {
    opkit_emu::ctx().saturating = ctrlValue == 1 ? opkit_emu::SrcLoc{nullptr, 0} : loc;
  }
  template <bool isSetMask = true>
  static void ResetMask() {
    if constexpr (isSetMask) SetVectorMask<uint16_t>(~0ull, ~0ull);
  }
};
// the same register through dav_c220's free function (impl/basic_api/dav_c220/kernel_operator_reg_others_impl.h:50)
inline int64_t GetRsvdCnt() { return AscendCUtils::GetRsvdCnt(); }
}  // namespace AscendC
