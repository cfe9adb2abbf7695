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
// Gatherb's parameters and the GatherMask mode names (asc-devkit 82b89a15 include/basic_api/kernel_struct_gather.h:
// 27-50; the A2 default is VERSION_V2 there). Of GatherRepeatParams Gatherb reads dstBlkStride and dstRepStride;
// the page calls the rest reserved, "no longer processed".
struct GatherRepeatParams {
  GatherRepeatParams() {}
  GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
      : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
  uint32_t blockNumber = 8;
  uint16_t dstRepStride = 8;
  uint8_t dstBlkStride = 1;
  uint8_t src0BlkStride = 1;
  uint8_t src1BlkStride = 1;
  uint8_t src0RepStride = 8;
  uint8_t src1RepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
const GatherMaskMode defaultGahterMaskMode = GatherMaskMode::VERSION_V2;  // sic: CANN's spelling, kept beside
const GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;
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

// Gatherb (离散与聚合/Gatherb(ISASI).md; A2: uint16_t, uint32_t): repeat i, block j copies the 32 bytes at src +
// offset[i * 8 + j] (bytes) to dst + (i * dstRepStride + j * dstBlkStride) blocks; dstBlkStride 0 counts as 1.
// Checked: dst, src, offset 32-byte aligned, an offset a multiple of 32 (the page: the address after the offset
// is 32-byte aligned) and inside src (tensor-bounds), the offsets and the gathered blocks initialised, dst and
// src not the same memory (the page: not supported).
template <class T>
void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& offset,
             const uint8_t repeatTime, const GatherRepeatParams& repeatParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(std::is_same<T, uint16_t>::value || std::is_same<T, uint32_t>::value,
                "opkit emulator: Gatherb supports uint16_t and uint32_t on this chip (its page)");
  const char* call = "Gatherb";
  if (repeatTime == 0) return;
  if (dst.m_.addr == src.m_.addr)
    fail("api-argument", call, loc, "dst and src are the same memory (the page: not supported)");
  const uint32_t blk = repeatParams.dstBlkStride == 0 ? 1 : repeatParams.dstBlkStride;
  const uint32_t rep = repeatParams.dstRepStride;
  ApiCall c(Pipe::V, call, loc);
  c.read(offset.m_, 0, uint64_t(repeatTime) * 8, 32, "offset", kSink);
  c.read(src.m_, 0, src.m_.bytes / sizeof(T), 8 * sizeof(T), "src");
  c.write_rows(dst.m_, 0, repeatTime, (7 * blk + 1) * kBlk, rep * kBlk, 8 * sizeof(T), "dst");
  c.commit(Flow::Manual);
  for (uint32_t i = 0; i < repeatTime; ++i)
    for (uint32_t j = 0; j < 8; ++j) {
      const uint32_t off = offset.data()[i * 8 + j];
      if (off % kBlk)
        fail("ub-alignment", call, loc, strf("offset[%u] = %u bytes: the block it names is not 32-byte aligned", i * 8 + j, off));
      if (uint64_t(off) + kBlk > src.m_.bytes)
        fail("tensor-bounds", call, loc, strf("offset[%u] = %u bytes: the block ends past src (%u bytes)", i * 8 + j, off, src.m_.bytes));
      src.m_.check_initialized(off, kBlk, sizeof(T), call, loc, "src");
      const uint32_t d = (i * rep + j * blk) * kBlk;
      std::memcpy(reinterpret_cast<uint8_t*>(dst.data()) + d, reinterpret_cast<const uint8_t*>(src.data()) + off, kBlk);
      dst.m_.mark_written(d, kBlk);
    }
}

}  // namespace AscendC
