// CreateVecIndex: dst = firstValue, firstValue + 1, ... (int16_t, half, int32_t, float on A2).
// Doc: asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据填充/CreateVecIndex.md (mirror-cann/asc-devkit
// 82b89a15). The values follow how CANN's A2 code builds them (impl/basic_api/dav_c220/
// kernel_operator_vec_createvecindex_impl.h), because for half they are not always firstValue + i:
//  - the first DataBlock is written by the scalar unit: T(firstValue + i), computed in float for half / float;
//  - every further DataBlock of the first repeat is the one before plus the elements of a DataBlock, and every
//    further repeat the one before plus the elements of a repeat, each an Adds in T (rounded in T: for half,
//    above 2048 the steps round, exactly as on the device). The level-0 bit-mask form writes its whole first
//    repeat with the scalar unit.
//  - count or repeatTime 0, or a continuous mask of 0, is a NOP (the page); a continuous mask above the lanes
//    counts as all of them (掩码.md).
#pragma once
#include "opkit_emu/level0.h"

namespace opkit_emu {

template <class T> inline constexpr bool is_vec_index_t =
    std::is_same<T, int16_t>::value || std::is_same<T, half>::value || std::is_same<T, int32_t>::value ||
    std::is_same<T, float>::value;

// CANN's GetCreateVecIndexValue: the scalar unit's firstValue + offset.
template <class T>
inline T vec_index_first(T first, uint32_t off) {
  if constexpr (std::is_integral<T>::value) return static_cast<T>(static_cast<int64_t>(first) + off);
  else return from_f<T>(to_f(first) + static_cast<float>(off));
}
// One Adds lane: x + step in T (integers wrap).
template <class T>
inline T vec_index_step(T x, uint32_t step) {
  if constexpr (std::is_integral<T>::value)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<int64_t>(x) + step));
  else return from_f<T>(to_f(x) + static_cast<float>(step));
}

// The value of lane l of repeat r (lanes of one repeat, in order) given the previous values.
template <class T>
struct VecIndexValues {
  T first;
  bool scalar_repeat;  // the bit-mask form: the whole first repeat from the scalar unit
  T at(const T* rep0, const T* prev, uint32_t r, uint32_t l) const {
    if (r > 0) return vec_index_step(prev[l], kLanes<T>);
    if (l < kPerBlk<T> || scalar_repeat) return vec_index_first(first, l);
    return vec_index_step(rep0[l - kPerBlk<T>], kPerBlk<T>);
  }
};

template <class T>
void vec_index_l0(const AscendC::LocalTensor<T>& dst, T first, MaskArg m, uint8_t repeatTime, uint16_t blk,
                  uint8_t rep, SrcLoc loc) {
  const char* call = "CreateVecIndex";
  const L0Plan p = l0_plan<T>(true, m, repeatTime, call, loc);
  if (p.repeats == 0) return;
  const L0Geom g{blk, rep};
  ApiCall c(Pipe::V, call, loc);
  l0_declare<T>(c, dst, p, g, true, "dst");
  c.commit(Flow::Manual);
  l0_count<T>(VecOp::Other, p);
  const VecIndexValues<T> v{first, m.bits};
  T prev[kLanes<T>], cur[kLanes<T>];
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const bool last = r + 1 == p.repeats;
    const uint64_t lo = last ? p.last_lo : p.lo, hi = last ? p.last_hi : p.hi;
    for (uint32_t l = 0; l < kLanes<T>; ++l) {
      cur[l] = v.at(cur, prev, r, l);  // lanes a mask leaves out still carry the sequence (never written)
      if (!lane_on(lo, hi, l)) continue;
      const uint64_t at = g.at<T>(r, l);
      dst.data()[at] = cur[l];
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(at * sizeof(T)), sizeof(T), true);
    }
    std::memcpy(prev, cur, sizeof cur);
  }
}

}  // namespace opkit_emu

namespace AscendC {

template <typename T>
void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_vec_index_t<T>, "opkit emulator: CreateVecIndex supports int16_t, half, int32_t, float on this chip");
  if (!vec_prologue<T>(VecOp::Other, "CreateVecIndex", count, loc)) return;
  ApiCall(Pipe::V, "CreateVecIndex", loc).dst(dst, count).commit();
  T* d = dst.data();
  const VecIndexValues<T> v{firstValue, false};
  for (uint32_t i = 0; i < count; ++i)  // i - kLanes / i - kPerBlk: the repeat / DataBlock before
    d[i] = i >= kLanes<T> ? vec_index_step(d[i - kLanes<T>], kLanes<T>) : v.at(d, nullptr, 0, i);
}

template <typename T>
void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, uint64_t mask, uint8_t repeatTime, uint16_t dstBlkStride,
                    uint8_t dstRepStride, OPKIT_LOC) {
  static_assert(opkit_emu::is_vec_index_t<T>,
                "opkit emulator: CreateVecIndex supports int16_t, half, int32_t, float on this chip");
  opkit_emu::vec_index_l0(dst, firstValue, opkit_emu::MaskArg(mask), repeatTime, dstBlkStride, dstRepStride, loc);
}

template <typename T>
void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, uint64_t mask[], uint8_t repeatTime,
                    uint16_t dstBlkStride, uint8_t dstRepStride, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_vec_index_t<T>, "opkit emulator: CreateVecIndex supports int16_t, half, int32_t, float on this chip");
  vec_index_l0(dst, firstValue, mask_bits(mask, kLanes<T>), repeatTime, dstBlkStride, dstRepStride, loc);
}

}  // namespace AscendC
