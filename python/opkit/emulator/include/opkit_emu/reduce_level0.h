// Level-0 reductions: WholeReduceSum/Max/Min (one result per repeat), BlockReduceSum/Max/Min (one per
// DataBlock), PairReduceSum (one per adjacent pair), and their current names ReduceRepeat<ReduceType>,
// ReduceDataBlock<ReduceType>, ReducePairElem<ReduceType::SUM> (归约计算/ReduceRepeat.md, ReduceDataBlock.md,
// ReducePairElem.md at mirror-cann/asc-devkit 82b89a15: same instructions, the type a template argument).
// Doc: asc-devkit docs/api/SIMD-API/基础API/Memory矢量计算/归约计算/{WholeReduceSum,WholeReduceMax,
// WholeReduceMin,BlockReduceSum,BlockReduceMax,BlockReduceMin,PairReduceSum}.md
// (mirror-cann/asc-devkit 7359511d). Sums add "in a binary tree, two by two" (the docs' words); masked-off
// lanes add 0. A result with no active lane (a DataBlock or pair fully masked off) is not written.
#pragma once
#include "opkit_emu/level0.h"
#include "opkit_emu/reduce.h"

namespace AscendC {
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class ReduceType { NONE = -1, SUM = 0, MAX, MIN };  // impl/utils/common_types.h
}  // namespace AscendC

namespace opkit_emu {

enum class RKind { Sum, Max, Min };

// Reduces lanes [l0, l0 + n) of one repeat (values already gathered, 0 where masked off).
template <class T, RKind K>
inline void reduce_lanes(const T* v, const bool* on, uint32_t n, T& out, uint32_t& idx, bool& any) {
  any = false;
  idx = 0;
  if constexpr (K == RKind::Sum) {
    // pairwise tree over n (a power of two) values, rounding every addition to T
    float buf[kLanes<T>];
    for (uint32_t i = 0; i < n; ++i) { buf[i] = on[i] ? to_f(v[i]) : 0.0f; any |= on[i]; }
    for (uint32_t w = n; w > 1; w /= 2)
      for (uint32_t i = 0; i < w / 2; ++i) buf[i] = rnd<T>(fadd(buf[2 * i], buf[2 * i + 1]));
    out = from_f<T>(buf[0]);
  } else {
    float best = 0.0f;
    for (uint32_t i = 0; i < n; ++i) {
      if (!on[i]) continue;
      const float x = to_f(v[i]);
      // a NaN lane gives NaN and its index, the first one (see reduce_arg_loop in opkit_emu/reduce.h)
      if (x != x) { idx = i, out = v[i], any = true; return; }
      if (!any || (K == RKind::Max ? x > best : x < best)) { best = x; idx = i; out = v[i]; }
      any = true;
    }
  }
}

// Gathers repeat r of src (lanes, with their on/off state) through the level-0 geometry.
template <class T>
inline void gather_repeat(const T* s, const L0Plan& p, const L0Geom& g, uint32_t r, T* v, bool* on) {
  const bool last = r + 1 == p.repeats;
  const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
  for (uint32_t l = 0; l < kLanes<T>; ++l) {
    on[l] = lane_on(lo, hi, l);
    v[l] = on[l] ? s[g.at<T>(r, l)] : T(0);
  }
}

template <class T>
inline void put_index(uint8_t* at, uint32_t idx) {
  if constexpr (sizeof(T) == 2) { uint16_t b = static_cast<uint16_t>(idx); std::memcpy(at, &b, 2); }
  else std::memcpy(at, &idx, 4);
}

template <class T> inline constexpr bool is_red0_t = std::is_same<T, half>::value || std::is_same<T, float>::value;

// WholeReduce: one result per repeat at dst + r * dstRepStride (unit: the per-repeat result).
template <class T, RKind K>
void whole_reduce(VecOp op, const char* call, bool setMask, const AscendC::LocalTensor<T>& dst,
                  const AscendC::LocalTensor<T>& src, MaskArg m, int32_t repeat, int32_t dstRep, int32_t srcBlk,
                  int32_t srcRep, AscendC::ReduceOrder order, SrcLoc loc) {
  using AscendC::ReduceOrder;
  const L0Plan p = l0_plan<T>(setMask, m, repeat, call, loc);
  if (p.repeats == 0) return;
  const L0Geom gs{static_cast<uint32_t>(srcBlk), static_cast<uint32_t>(srcRep)};
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, src, p, gs, false, "src");
  // bytes of one result, and where value / index go inside it
  const bool only_v = K == RKind::Sum || order == ReduceOrder::ORDER_ONLY_VALUE;
  const bool only_i = K != RKind::Sum && order == ReduceOrder::ORDER_ONLY_INDEX;
  const uint32_t unit = only_v ? sizeof(T) : only_i ? 4 : 2 * sizeof(T);
  const uint64_t need = (uint64_t(p.repeats - 1) * dstRep) * unit + unit;
  dst.m_.check_live(call, loc, "dst");
  if (need > dst.m_.bytes)
    fail("tensor-bounds", call, loc, strf("dst: %u results need %llu bytes but the tensor holds only %u bytes",
                                          p.repeats, (unsigned long long)need, dst.m_.bytes));
  if (dst.m_.ub_off() % sizeof(T) != 0)
    fail("ub-alignment", call, loc, strf("dst starts at UB offset %u, not %zu-byte aligned", dst.m_.ub_off(), sizeof(T)));
  c.write(dst.m_, 0, need, 8, "dst", kUnaligned | kPastView);
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<T>(op, p);
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.data());
  T v[kLanes<T>];
  bool on[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {
    gather_repeat<T>(src.data(), p, gs, r, v, on);
    bool bad = false;  // a result is poison if any active lane of its repeat is
    for (uint32_t l = 0; poisoned && l < kLanes<T>; ++l) bad = bad || (on[l] && l0_poisoned(src, gs, r, l));
    T out{};
    uint32_t idx;
    bool any;
    reduce_lanes<T, K>(v, on, kLanes<T>, out, idx, any);
    uint8_t* at = d + uint64_t(r) * dstRep * unit;
    if (only_i) std::memcpy(at, &idx, 4);
    else if (only_v || order == ReduceOrder::ORDER_VALUE_INDEX) {
      std::memcpy(at, &out, sizeof(T));
      if (!only_v) put_index<T>(at + sizeof(T), idx);
    } else {
      put_index<T>(at, idx);
      std::memcpy(at + sizeof(T), &out, sizeof(T));
    }
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(at - d), unit, !bad);
  }
}

// BlockReduce (one result per DataBlock, 8 per repeat, dst unit 8 elements) and PairReduceSum
// (one per lane pair, dst unit half a repeat).
template <class T, RKind K, uint32_t Group>
void group_reduce(VecOp op, const char* call, bool setMask, const AscendC::LocalTensor<T>& dst,
                  const AscendC::LocalTensor<T>& src, MaskArg m, int32_t repeat, int32_t dstRep, int32_t srcBlk,
                  int32_t srcRep, SrcLoc loc) {
  const L0Plan p = l0_plan<T>(setMask, m, repeat, call, loc);
  if (p.repeats == 0) return;
  const L0Geom gs{static_cast<uint32_t>(srcBlk), static_cast<uint32_t>(srcRep)};
  ApiCall c(Pipe::V, call, loc);
  l0_declare(c, src, p, gs, false, "src");
  constexpr uint32_t per_rep = kLanes<T> / Group;  // results per repeat
  const uint64_t need = (uint64_t(p.repeats - 1) * dstRep * per_rep + per_rep) * sizeof(T);
  dst.m_.check_live(call, loc, "dst");
  if (need > dst.m_.bytes)
    fail("tensor-bounds", call, loc, strf("dst: %u repeats need %llu bytes but the tensor holds only %u bytes",
                                          p.repeats, (unsigned long long)need, dst.m_.bytes));
  if (dst.m_.ub_off() % sizeof(T) != 0)
    fail("ub-alignment", call, loc, strf("dst starts at UB offset %u, not %zu-byte aligned", dst.m_.ub_off(), sizeof(T)));
  c.write(dst.m_, 0, need / sizeof(T), 8 * sizeof(T), "dst", kUnaligned | kPastView);
  const bool poisoned = c.commit(Flow::Manual);
  l0_count<T>(op, p);
  T v[kLanes<T>];
  bool on[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {
    gather_repeat<T>(src.data(), p, gs, r, v, on);
    for (uint32_t k = 0; k < per_rep; ++k) {
      T out{};
      uint32_t idx;
      bool any;
      reduce_lanes<T, K>(v + k * Group, on + k * Group, Group, out, idx, any);
      if (!any) continue;
      bool bad = false;  // poison if any active lane of the group is
      for (uint32_t l = k * Group; poisoned && l < (k + 1) * Group; ++l) bad = bad || (on[l] && l0_poisoned(src, gs, r, l));
      const uint64_t e = uint64_t(r) * dstRep * per_rep + k;
      dst.data()[e] = out;
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(e * sizeof(T)), sizeof(T), !bad);
    }
  }
}

}  // namespace opkit_emu

namespace AscendC {

#define OPKIT_EMU_WHOLE(NAME, KIND, EXTRA_P, EXTRA_A)                                                          \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime, \
            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride EXTRA_P, OPKIT_LOC) { \
    using namespace opkit_emu;                                                                                \
    static_assert(is_red0_t<T>, "opkit emulator: " #NAME " supports half and float on this chip");           \
    whole_reduce<T, KIND>(VecOp::Other, #NAME, isSetMask, dst, src, MaskArg(static_cast<uint64_t>(mask)),      \
                          repeatTime, dstRepStride, srcBlkStride, srcRepStride, EXTRA_A, loc);                \
  }                                                                                                           \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTime, \
            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride EXTRA_P, OPKIT_LOC) { \
    using namespace opkit_emu;                                                                                \
    static_assert(is_red0_t<T>, "opkit emulator: " #NAME " supports half and float on this chip");           \
    whole_reduce<T, KIND>(VecOp::Other, #NAME, isSetMask, dst, src, mask_bits(mask, kLanes<T>), repeatTime,    \
                          dstRepStride, srcBlkStride, srcRepStride, EXTRA_A, loc);                            \
  }
#define OPKIT_EMU_COMMA ,
OPKIT_EMU_WHOLE(WholeReduceSum, RKind::Sum, , ReduceOrder::ORDER_ONLY_VALUE)
OPKIT_EMU_WHOLE(WholeReduceMax, RKind::Max, OPKIT_EMU_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
OPKIT_EMU_WHOLE(WholeReduceMin, RKind::Min, OPKIT_EMU_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
#undef OPKIT_EMU_WHOLE

// BlockReduce* and PairReduceSum take repeatTime before the mask.
#define OPKIT_EMU_GROUP(NAME, KIND, GROUP)                                                                     \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask, \
            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, OPKIT_LOC) {   \
    using namespace opkit_emu;                                                                                \
    static_assert(is_red0_t<T>, "opkit emulator: " #NAME " supports half and float on this chip");           \
    group_reduce<T, KIND, GROUP>(VecOp::Other, #NAME, isSetMask, dst, src, MaskArg(static_cast<uint64_t>(mask)), \
                                 repeatTime, dstRepStride, srcBlkStride, srcRepStride, loc);                  \
  }                                                                                                           \
  template <class T, bool isSetMask = true>                                                                   \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const uint64_t mask[], \
            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, OPKIT_LOC) {   \
    using namespace opkit_emu;                                                                                \
    static_assert(is_red0_t<T>, "opkit emulator: " #NAME " supports half and float on this chip");           \
    group_reduce<T, KIND, GROUP>(VecOp::Other, #NAME, isSetMask, dst, src, mask_bits(mask, kLanes<T>),         \
                                 repeatTime, dstRepStride, srcBlkStride, srcRepStride, loc);                  \
  }
OPKIT_EMU_GROUP(BlockReduceSum, RKind::Sum, (32 / sizeof(T)))
OPKIT_EMU_GROUP(BlockReduceMax, RKind::Max, (32 / sizeof(T)))
OPKIT_EMU_GROUP(BlockReduceMin, RKind::Min, (32 / sizeof(T)))
OPKIT_EMU_GROUP(PairReduceSum, RKind::Sum, 2)
#undef OPKIT_EMU_GROUP


}  // namespace AscendC

// ---- current names: the reduction kind as a template argument --------------------------------------
namespace opkit_emu {
template <AscendC::ReduceType R>
constexpr RKind rkind() {
  static_assert(R != AscendC::ReduceType::NONE, "ReduceType::NONE is not a reduction");
  return R == AscendC::ReduceType::SUM ? RKind::Sum : R == AscendC::ReduceType::MAX ? RKind::Max : RKind::Min;
}
template <class T, class U>
constexpr void same_reduce_types() {
  static_assert(std::is_same<T, U>::value, "opkit emulator: the level-0 reductions take dst and src of one type (half or float) on this chip");
  static_assert(is_red0_t<T>, "opkit emulator: the level-0 reductions support half and float on this chip");
}
}  // namespace opkit_emu

namespace AscendC {
template <ReduceType reduceType, class T, class U, bool isSetMask = true>
void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask, const int32_t repeatTime,
                  const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                  ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, OPKIT_LOC) {
  using namespace opkit_emu;
  same_reduce_types<T, U>();
  whole_reduce<T, rkind<reduceType>()>(VecOp::Other, "ReduceRepeat", isSetMask, dst, src, MaskArg(static_cast<uint64_t>(mask)),
                                       repeatTime, dstRepStride, srcBlkStride, srcRepStride, order, loc);
}
template <ReduceType reduceType, class T, class U, bool isSetMask = true>
void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[], const int32_t repeatTime,
                  const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                  ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, OPKIT_LOC) {
  using namespace opkit_emu;
  same_reduce_types<T, U>();
  whole_reduce<T, rkind<reduceType>()>(VecOp::Other, "ReduceRepeat", isSetMask, dst, src, mask_bits(mask, kLanes<T>),
                                       repeatTime, dstRepStride, srcBlkStride, srcRepStride, order, loc);
}
#define OPKIT_EMU_REDUCE_GROUP(NAME, GROUP, SUM_ONLY)                                                           \
  template <ReduceType reduceType, class T, class U, bool isSetMask = true>                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask, const int32_t repeatTime,  \
            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, OPKIT_LOC) {     \
    using namespace opkit_emu;                                                                                  \
    same_reduce_types<T, U>();                                                                                  \
    static_assert(!SUM_ONLY || reduceType == ReduceType::SUM, #NAME " supports ReduceType::SUM only");          \
    group_reduce<T, rkind<reduceType>(), GROUP>(VecOp::Other, #NAME, isSetMask, dst, src, MaskArg(static_cast<uint64_t>(mask)),  \
                                                repeatTime, dstRepStride, srcBlkStride, srcRepStride, loc);     \
  }                                                                                                             \
  template <ReduceType reduceType, class T, class U, bool isSetMask = true>                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[], const int32_t repeatTime, \
            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, OPKIT_LOC) {     \
    using namespace opkit_emu;                                                                                  \
    same_reduce_types<T, U>();                                                                                  \
    static_assert(!SUM_ONLY || reduceType == ReduceType::SUM, #NAME " supports ReduceType::SUM only");          \
    group_reduce<T, rkind<reduceType>(), GROUP>(VecOp::Other, #NAME, isSetMask, dst, src,                       \
                                                mask_bits(mask, kLanes<T>), repeatTime, dstRepStride,           \
                                                srcBlkStride, srcRepStride, loc);                               \
  }
OPKIT_EMU_REDUCE_GROUP(ReduceDataBlock, (32 / sizeof(T)), false)
OPKIT_EMU_REDUCE_GROUP(ReducePairElem, 2, true)
#undef OPKIT_EMU_REDUCE_GROUP

}  // namespace AscendC
