// ReduceSum / ReduceMax / ReduceMin, level-0 form (mask, repeatTime, srcRepStride; asc-devkit
// docs/api/SIMD-API/基础API/Memory矢量计算/归约计算/ReduceSum.md, ReduceMax.md, ReduceMin.md): every active lane of
// every repeat reduced to one value in dst[0] (max/min: then the index in dst[1], stored in T's bits, the lowest
// index on ties). As the pages describe it: each repeat is reduced first (a sum as a pairwise tree over the
// repeat's lanes, masked-off lanes adding 0, every addition rounded to T, as WholeReduceSum does), then the
// per-repeat results are reduced the same way, a repeat's worth at a time, until one is left. The index of a
// lane is repeat x (lanes per repeat) + lane. repeatTime may exceed 255 (up to int32); 0 is a no-op, and so is a
// mask selecting no lane (a continuous mask above the lanes counts as all of them, 掩码.md); src's
// DataBlocks are contiguous within a repeat (block stride 1), repeats srcRepStride DataBlocks apart; dst needs the
// result's alignment only (reduce_dst_align in reduce.h). The result is poison when an active lane is. sharedTmpBuffer must be live; its contents are not modelled.
#pragma once
#include "opkit_emu/reduce.h"
#include "opkit_emu/reduce_level0.h"

namespace opkit_emu {
template <class T, RKind K>
void reduce_repeats(VecOp op, const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                    const AscendC::LocalTensor<T>& tmp, MaskArg m, int32_t repeat, int32_t srcRepStride, bool calIndex,
                    SrcLoc loc) {
  static_assert(is_red0_t<T>, "opkit emulator: ReduceSum/ReduceMax/ReduceMin support half and float on this chip");
  if (repeat < 0) fail("vector-mask", call, loc, strf("repeatTime %d is negative", repeat));
  if (srcRepStride < 0 || srcRepStride > 65535)
    fail("vector-mask", call, loc, strf("srcRepStride %d is outside [0, 65535]", srcRepStride));
  L0Plan p = l0_plan<T>(true, m, repeat > 255 ? 255 : repeat, call, loc);  // the page allows more repeats
  // a mask that selects no lane is a NOP (掩码.md), whatever repeatTime says
  p.repeats = p.lo == 0 && p.hi == 0 ? 0 : static_cast<uint32_t>(repeat);
  if (p.repeats == 0) return;
  const L0Geom gs{1, static_cast<uint32_t>(srcRepStride)};
  tmp.m_.check_live(call, loc, "sharedTmpBuffer");
  const bool idx = K != RKind::Sum && calIndex;
  if (idx && sizeof(T) == 2 && uint64_t(p.repeats) * kLanes<T> > 65536)
    fail("tensor-bounds", call, loc, "a half index cannot exceed 65535 (ReduceMax.md)");
  reduce_dst_align(dst, idx ? 2 : 1, call, loc);
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, src, p, gs, false, "src");
  c.dst(dst, idx ? 2 : 1, "dst", kUnaligned);
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<T>(op, p);
  std::vector<T> part(p.repeats);
  std::vector<uint32_t> at(p.repeats);
  std::vector<uint8_t> has(p.repeats);
  bool bad = false;
  T v[kLanes<T>];
  bool on[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {
    gather_repeat<T>(src.data(), p, gs, r, v, on);
    for (uint32_t l = 0; poisoned && !bad && l < kLanes<T>; ++l) bad = on[l] && l0_poisoned(src, gs, r, l);
    bool any;
    reduce_lanes<T, K>(v, on, kLanes<T>, part[r], at[r], any);
    at[r] += r * kLanes<T>;
    has[r] = any;
  }
  // later rounds: the per-repeat results, a repeat's worth at a time
  while (part.size() > 1) {
    std::vector<T> next;
    std::vector<uint32_t> next_at;
    std::vector<uint8_t> next_has;
    for (size_t base = 0; base < part.size(); base += kLanes<T>) {
      const uint32_t n = static_cast<uint32_t>(std::min<size_t>(kLanes<T>, part.size() - base));
      for (uint32_t l = 0; l < kLanes<T>; ++l) {
        on[l] = l < n && has[base + l];
        v[l] = l < n ? part[base + l] : T(0);
      }
      T out{};
      uint32_t i;
      bool any;
      reduce_lanes<T, K>(v, on, kLanes<T>, out, i, any);
      next.push_back(out);
      next_at.push_back(any ? at[base + i] : 0);
      next_has.push_back(any);
    }
    part.swap(next);
    at.swap(next_at);
    has.swap(next_has);
  }
  dst.data()[0] = part[0];
  if (idx) {
    if constexpr (sizeof(T) == 4) std::memcpy(&dst.data()[1], &at[0], 4);
    else { const uint16_t b = static_cast<uint16_t>(at[0]); std::memcpy(&dst.data()[1], &b, 2); }
  }
  shadow_fill(dst.m_.ub_off(), (idx ? 2 : 1) * sizeof(T), !bad);
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_REDUCE_L0(NAME, KIND, OP, IDX_PARAM, IDX_ARG)                                                   \
  template <class T>                                                                                          \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,      \
            const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride IDX_PARAM, OPKIT_LOC) {  \
    using namespace opkit_emu;                                                                                 \
    reduce_repeats<T, RKind::KIND>(VecOp::OP, #NAME, dst, src, sharedTmpBuffer, mask_bits(mask, kLanes<T>),   \
                                   repeatTime, srcRepStride, IDX_ARG, loc);                                   \
  }                                                                                                           \
  template <class T>                                                                                          \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,      \
            const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride IDX_PARAM, OPKIT_LOC) {     \
    using namespace opkit_emu;                                                                                 \
    reduce_repeats<T, RKind::KIND>(VecOp::OP, #NAME, dst, src, sharedTmpBuffer,                               \
                                   MaskArg(static_cast<uint64_t>(mask < 0 ? 0 : mask)), repeatTime, srcRepStride, \
                                   IDX_ARG, loc);                                                             \
  }
#define OPKIT_EMU_COMMA ,
OPKIT_EMU_REDUCE_L0(ReduceSum, Sum, ReduceSum, , false)
OPKIT_EMU_REDUCE_L0(ReduceMax, Max, ReduceMax, OPKIT_EMU_COMMA bool calIndex = false, calIndex)
OPKIT_EMU_REDUCE_L0(ReduceMin, Min, ReduceMin, OPKIT_EMU_COMMA bool calIndex = false, calIndex)
#undef OPKIT_EMU_COMMA
#undef OPKIT_EMU_REDUCE_L0
}  // namespace AscendC
