// Gather (element gather by byte offsets) and GatherMask (keep the elements a bit pattern selects, packed).
// Doc: asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/离散与聚合/Gather.md and 比较与选择/GatherMask.md
// (mirror-cann/asc-devkit 7359511d):
//  - Gather: dst[i] = src[(srcBaseAddr + srcOffset[i]) / sizeof(T)], srcOffset uint32_t byte offsets;
//    the level-0 form gathers the masked lanes of each repeat into dst + r * dstRepStride DataBlocks;
//  - GatherMask: built-in patterns 1..7 (even lanes, odd lanes, lane % 4 == 0/1/2/3, all) or a user
//    pattern tensor (uint16_t for 2-byte T, uint32_t for 4-byte T), one bit per lane; reduceMode false:
//    repeatTimes full repeats; true (A2 "configuration 1"): `mask` elements per repeat. Kept elements
//    are packed into dst in order; rsvdCnt is how many.
#pragma once
#include "opkit_emu/level0.h"

namespace AscendC {
struct GatherMaskParams {
  uint8_t src0BlockStride = 1;
  uint16_t repeatTimes = 1;
  uint16_t src0RepeatStride = 8;
  uint8_t src1RepeatStride = 0;
  GatherMaskParams() {}
  GatherMaskParams(uint8_t s0b, uint16_t rep, uint16_t s0r, uint8_t s1r)
      : src0BlockStride(s0b), repeatTimes(rep), src0RepeatStride(s0r), src1RepeatStride(s1r) {}
};
}  // namespace AscendC

namespace opkit_emu {

template <class T> inline constexpr bool is_gather_t =
    std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value || std::is_same<T, half>::value ||
    (is_bf16_v<T> && !kIs310P) || std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
    std::is_same<T, float>::value;

// One gathered element: the byte offset must land on an element of src.
template <class T>
inline T gather_one(const AscendC::LocalTensor<T>& src, uint64_t byte, const char* call, SrcLoc loc) {
  if (byte % sizeof(T) != 0)
    fail("ub-alignment", call, loc, strf("offset %llu bytes is not a multiple of the %zu-byte element",
                                         (unsigned long long)byte, sizeof(T)));
  if (byte + sizeof(T) > src.m_.bytes)
    fail("tensor-bounds", call, loc, strf("offset %llu bytes is past the end of src (%u bytes)",
                                          (unsigned long long)byte, src.m_.bytes));
  src.m_.check_initialized(static_cast<uint32_t>(byte), sizeof(T), sizeof(T), call, loc, "src");
  return src.data()[byte / sizeof(T)];
}

// Lane l of GatherMask's built-in pattern p (bit 0 = lane 0).
inline bool builtin_pattern(uint8_t p, uint32_t l) {
  switch (p) {
    case 1: return l % 2 == 0;
    case 2: return l % 2 == 1;
    case 3: case 4: case 5: case 6: return l % 4 == static_cast<uint32_t>(p - 3);
    default: return true;
  }
}

template <class T, class PatFn>
void gather_mask(const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                 bool reduceMode, uint32_t mask, const AscendC::GatherMaskParams& gp, uint64_t& rsvdCnt, PatFn pat,
                 SrcLoc loc) {
  constexpr uint32_t lanes = kLanes<T>;
  if (reduceMode && (mask < 1 || mask > lanes))
    fail("vector-mask", call, loc, strf("reduceMode (counter) mask %u is outside [1, %u] (elements per repeat)", mask, lanes));
  const uint32_t per = reduceMode ? mask : lanes;
  L0Plan p;
  p.repeats = gp.repeatTimes;
  lanes_to_mask(per, p.lo, p.hi);
  p.last_lo = p.lo;
  p.last_hi = p.hi;
  const L0Geom g{gp.src0BlockStride, gp.src0RepeatStride};
  l0_operand(src0, p, g, true, call, loc, "src0");
  dst.m_.check_live(call, loc, "dst");
  if (dst.m_.ub_off() % kBlk)
    fail("ub-alignment", call, loc, strf("dst starts at UB offset %u, not 32-byte aligned", dst.m_.ub_off()));
  l0_count<T>(VecOp::Other, p);
  uint64_t n = 0;
  for (uint32_t r = 0; r < p.repeats; ++r)
    for (uint32_t l = 0; l < per; ++l) {
      if (!pat(r, l)) continue;
      if ((n + 1) * sizeof(T) > dst.m_.bytes)
        fail("tensor-bounds", call, loc, strf("dst holds %u bytes; the kept elements need more", dst.m_.bytes));
      dst.data()[n++] = src0.data()[g.at<T>(r, l)];
    }
  dst.m_.mark_written(0, n * sizeof(T));
  rsvdCnt = n;
  ctx().rsvd_cnt = n;  // the RSVD_CNT register CANN's GatherMask reads its count from
}

}  // namespace opkit_emu

namespace AscendC {

template <class T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint32_t count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_gather_t<T>, "opkit emulator: Gather does not support this element type on this chip");
  if (!vec_prologue<T>(VecOp::Other, "Gather", count, loc)) return;
  dst_check(dst, count, "Gather", loc);
  src_check(srcOffset, count, "Gather", loc, "srcOffset");
  src.m_.check_live("Gather", loc, "src");
  for (uint32_t i = 0; i < count; ++i)
    dst.data()[i] = gather_one(src, uint64_t(srcBaseAddr) + srcOffset.data()[i], "Gather", loc);
  dst_done(dst, count);
}

#define OPKIT_EMU_GATHER_L0(MASKT, MASKV)                                                                     \
  template <class T>                                                                                         \
  void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,  \
              const uint32_t srcBaseAddr, MASKT mask, const uint8_t repeatTime, const uint16_t dstRepStride,  \
              OPKIT_LOC) {                                                                                   \
    using namespace opkit_emu;                                                                               \
    static_assert(is_gather_t<T>, "opkit emulator: Gather does not support this element type on this chip"); \
    const L0Plan p = l0_plan<T>(true, MASKV, repeatTime, "Gather", loc);                                     \
    if (p.repeats == 0) return;                                                                              \
    const L0Geom gd{1, dstRepStride};                                                                        \
    l0_operand(dst, p, gd, false, "Gather", loc, "dst");                                                     \
    src.m_.check_live("Gather", loc, "src");                                                                 \
    srcOffset.m_.check_operand(uint64_t(p.repeats) * kLanes<T> * 4, "Gather", loc, "srcOffset");             \
    l0_count<T>(VecOp::Other, p);                                                                            \
    l0_for_lanes<T>(p, [&](uint32_t r, uint32_t l) {                                                         \
      const uint32_t k = r * kLanes<T> + l;                                                                  \
      srcOffset.m_.check_initialized(k * 4, 4, 4, "Gather", loc, "srcOffset");                              \
      dst.data()[gd.at<T>(r, l)] = gather_one(src, uint64_t(srcBaseAddr) + srcOffset.data()[k], "Gather", loc); \
    });                                                                                                      \
    l0_mark(dst, p, gd, nullptr);                                                                            \
  }
OPKIT_EMU_GATHER_L0(const uint64_t, MaskArg(mask))
OPKIT_EMU_GATHER_L0(const uint64_t*, mask_bits(mask, kLanes<T>))
#undef OPKIT_EMU_GATHER_L0

// User pattern: one bit per lane; repeat r's bits start src1RepeatStride DataBlocks after repeat r-1's.
template <class T, class U>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_gather_t<T>, "opkit emulator: GatherMask does not support this element type on this chip");
  static_assert(sizeof(U) == sizeof(T) || sizeof(U) == 1,
                "opkit emulator: GatherMask: src1Pattern is uint16_t for 2-byte and uint32_t for 4-byte elements");
  const uint8_t* pb = reinterpret_cast<const uint8_t*>(src1Pattern.data());
  const uint32_t rep_bytes = gatherMaskParams.src1RepeatStride * kBlk;
  const uint32_t per = reduceMode ? mask : kLanes<T>;
  for (uint32_t r = 0; r < gatherMaskParams.repeatTimes; ++r)  // the pattern bits the call reads
    src1Pattern.m_.check_initialized(r * rep_bytes, (per + 7) / 8, 1, "GatherMask", loc, "src1Pattern");
  gather_mask<T>("GatherMask", dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt,
                 [&](uint32_t r, uint32_t l) { return (pb[r * rep_bytes + l / 8] >> (l % 8)) & 1; }, loc);
}
template <class T>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_gather_t<T>, "opkit emulator: GatherMask does not support this element type on this chip");
  if (src1Pattern < 1 || src1Pattern > 7)
    fail("api-argument", "GatherMask", loc, strf("built-in src1Pattern %u is outside [1, 7]", src1Pattern));
  gather_mask<T>("GatherMask", dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt,
                 [&](uint32_t, uint32_t l) { return builtin_pattern(src1Pattern, l); }, loc);
}

}  // namespace AscendC
