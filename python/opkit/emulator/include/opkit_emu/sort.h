// Sorting: Sort32, MrgSort (+ GetMrgSortResult), and the sort helpers CANN declares next to them (Concat,
// Extract, Sort<T, isFullSort>, GetSortLen, GetSortOffset). Doc pages (asc-devkit docs/zh/api/SIMD-API/ at
// mirror-cann/asc-devkit 82b89a15): 基础API/Memory矢量计算/排序组合（ISASI）/{Sort32,MrgSort,GetMrgSortResult}.md,
// 高阶API/排序操作/{Concat,Extract,Sort,MrgSort-93,GetSortLen,GetSortOffset}.md; what the helpers do on A2 is
// CANN's impl/basic_api/kernel_operator_proposal_intf_impl.h and dav_c220/kernel_operator_proposal_impl.h.
//  - A sorted element is 8 bytes: the score in the low bytes (float: 4; half: 2, then 2 reserved bytes, which
//    are written 0 here), the uint32_t index in the high 4.
//  - Sort32: per repeat, 32 scores (src0) and their indexes (src1) sorted by score, descending; equal scores
//    keep their order. Repeat strides: src0 32 elements, src1 32, dst 256 bytes. Alignment: src0 128 B
//    (float) / 64 B (half), src1 128 B, dst 256 B.
//  - MrgSort: up to 4 sorted queues (validBit 3 / 7 / 15; lengths in elements, at most 4095) merged into
//    dst, descending, ties to the earlier queue; ifExhaustedSuspension stops once one queue is used up and
//    GetMrgSortResult then reads how many elements of each queue went out. repeatTimes > 1 needs 4 equal,
//    contiguous queues, validBit 15 and no suspension (else rule api-argument). dst 32 B and queues 8 B
//    aligned; dst must not overlap a queue.
//  - Concat (A2): `concat = src` (no data moves). Extract: per repeat 32 elements, dstValue = the scores,
//    dstIndex = the indexes. Sort<T, false> is Sort32; Sort<T, true> then merges all repeats into one
//    descending list (tmp is left holding a copy of the result, as CANN's DoFullSort leaves it).
//    GetSortLen / GetSortOffset count T elements (half 4, float 2 per sorted element): the pages say bytes,
//    CANN's A2 code returns elements, and kernels size their buffers with that.
#pragma once
#include <algorithm>
#include <numeric>

#include "opkit_emu/vector.h"

namespace AscendC {

constexpr uint8_t MRG_SORT_ELEMENT_LEN = 4;

struct MrgSort4Info {
  MrgSort4Info() {}
  MrgSort4Info(const uint16_t elementLengthsIn[MRG_SORT_ELEMENT_LEN], const bool ifExhaustedSuspensionIn,
               const uint16_t validBitIn, const uint16_t repeatTimesIn)
      : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn),
        repeatTimes(static_cast<uint8_t>(repeatTimesIn)) {
    for (int i = 0; i < MRG_SORT_ELEMENT_LEN; ++i) elementLengths[i] = elementLengthsIn[i];
  }
  uint16_t elementLengths[MRG_SORT_ELEMENT_LEN] = {0};
  bool ifExhaustedSuspension = false;
  uint16_t validBit = 0;
  uint8_t repeatTimes = 1;
};

template <typename T>
struct MrgSortSrcList {
  MrgSortSrcList() {}
  MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                 const LocalTensor<T>& src4In)
      : src1(src1In), src2(src2In), src3(src3In), src4(src4In) {}
  LocalTensor<T> src1;
  LocalTensor<T> src2;
  LocalTensor<T> src3;
  LocalTensor<T> src4;
};

}  // namespace AscendC

namespace opkit_emu {

template <class T> inline constexpr bool is_sort_t = std::is_same<T, half>::value || std::is_same<T, float>::value;
#define OPKIT_EMU_SORT_T(T, api) static_assert(::opkit_emu::is_sort_t<T>, "opkit emulator: " api " supports half and float")

struct SortElem {  // one 8-byte sorted element, with whether any of its bytes is poison
  float score;
  uint8_t bytes[8];
  bool bad;
};

inline void sort_stats(uint64_t elems, uint64_t repeats) {
  BlockStats& s = ctx().stats;
  s.op_calls[static_cast<int>(VecOp::Other)]++;
  s.op_elems[static_cast<int>(VecOp::Other)] += elems;
  s.vector_elems += elems;
  s.vector_repeats += repeats;
}

inline void check_align(const TensorMeta& t, uint32_t align, const char* call, SrcLoc loc, const char* name) {
  if (t.ub_off() % align)
    fail("ub-alignment", call, loc,
         strf("%s starts at UB offset %u, not %u-byte aligned (offset %% %u = %u)", name, t.ub_off(), align, align,
              t.ub_off() % align));
}

template <class T>
SortElem read_elem(const TensorMeta& t, uint64_t i) {
  SortElem e;
  std::memcpy(e.bytes, t.addr + i * 8, 8);
  T s;
  std::memcpy(&s, e.bytes, sizeof(T));
  e.score = to_f(s);
  e.bad = shadow_first_hole(t.ub_off() + static_cast<uint32_t>(i * 8), 8) >= 0;
  return e;
}
inline void write_elem(const TensorMeta& t, uint64_t i, const SortElem& e) {
  std::memcpy(t.addr + i * 8, e.bytes, 8);
  shadow_fill(t.ub_off() + static_cast<uint32_t>(i * 8), 8, !e.bad);
}

template <class T>
void sort32(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
            const AscendC::LocalTensor<uint32_t>& src1, int32_t repeatTime, const char* call, SrcLoc loc) {
  if (repeatTime < 0 || repeatTime > 255)
    fail("api-argument", call, loc, strf("repeatTime %d is outside [0, 255]", repeatTime));
  if (repeatTime == 0) return;  // a NOP (Sort32.md)
  check_align(src0.m_, std::is_same<T, half>::value ? 64 : 128, call, loc, "src0");
  check_align(src1.m_, 128, call, loc, "src1");
  check_align(dst.m_, 256, call, loc, "dst");
  const uint32_t n = static_cast<uint32_t>(repeatTime) * 32;
  ApiCall c(Pipe::V, call, loc);
  c.write(dst.m_, 0, n, 64, "dst").src(src0, n, "src0").src(src1, n, "src1");
  const bool poisoned = c.commit(Flow::Manual);
  std::vector<SortElem> v(32);
  for (uint32_t r = 0; r < static_cast<uint32_t>(repeatTime); ++r) {
    for (uint32_t i = 0; i < 32; ++i) {
      const uint32_t k = r * 32 + i;
      SortElem& e = v[i];
      std::memset(e.bytes, 0, 8);
      std::memcpy(e.bytes, src0.data() + k, sizeof(T));
      std::memcpy(e.bytes + 4, src1.data() + k, 4);
      e.score = to_f(src0.data()[k]);
      e.bad = poisoned && (ApiCall::lane_poisoned(c.operand(1), k) || ApiCall::lane_poisoned(c.operand(2), k));
    }
    std::stable_sort(v.begin(), v.end(), [](const SortElem& a, const SortElem& b) { return a.score > b.score; });
    for (uint32_t i = 0; i < 32; ++i) write_elem(dst.m_, r * 32 + i, v[i]);
  }
  sort_stats(n, static_cast<uint64_t>(repeatTime));
}

struct MergeResult { uint16_t used[4] = {0, 0, 0, 0}; };

template <class T>
MergeResult mrg_sort(const AscendC::LocalTensor<T>& dst, const AscendC::MrgSortSrcList<T>& src,
                     const AscendC::MrgSort4Info& p, const char* call, SrcLoc loc) {
  const AscendC::LocalTensor<T>* q[4] = {&src.src1, &src.src2, &src.src3, &src.src4};
  int nq;
  switch (p.validBit) {
    case 3: nq = 2; break;
    case 7: nq = 3; break;
    case 15: nq = 4; break;
    default: fail("api-argument", call, loc, strf("validBit %u is not 3, 7 or 15", p.validBit));
  }
  MergeResult res;
  const uint32_t reps = p.repeatTimes;
  if (reps == 0) return res;  // a NOP (MrgSort.md)
  for (int k = 0; k < nq; ++k)
    if (p.elementLengths[k] > 4095)
      fail("api-argument", call, loc, strf("elementLengths[%d] = %u is above 4095", k, p.elementLengths[k]));
  if (reps > 1) {
    bool ok = nq == 4 && !p.ifExhaustedSuspension;
    for (int k = 1; ok && k < 4; ++k)
      ok = p.elementLengths[k] == p.elementLengths[0] &&
           q[k]->m_.addr == q[k - 1]->m_.addr + p.elementLengths[0] * 8u;
    if (!ok)
      fail("api-argument", call, loc,
           strf("repeatTimes %u needs 4 queues (validBit 15) of equal length stored one after another and "
                "ifExhaustedSuspension false (MrgSort.md)", reps));
  }
  check_align(dst.m_, kBlk, call, loc, "dst");
  uint64_t total = 0;
  for (int k = 0; k < nq; ++k) {
    check_align(q[k]->m_, 8, call, loc, "a source queue");
    total += p.elementLengths[k];
  }
  const uint64_t span = reps == 1 ? total : total * reps;  // elements of dst (and of the queues, repeated)
  static const char* names[4] = {"src.src1", "src.src2", "src.src3", "src.src4"};
  ApiCall c(Pipe::V, call, loc);
  c.write(dst.m_, 0, span, 64, "dst", kUnaligned);
  for (int k = 0; k < nq; ++k) {
    const uint64_t len = reps == 1 ? p.elementLengths[k] : uint64_t(p.elementLengths[k]) * (reps - 1) * 4 + p.elementLengths[k];
    c.read(q[k]->m_, 0, len, 64, names[k], kUnaligned);
    if (len && dst.m_.addr < q[k]->m_.addr + len * 8 && q[k]->m_.addr < dst.m_.addr + span * 8)
      fail("api-argument", call, loc, strf("dst overlaps %s: MrgSort cannot work in place (MrgSort.md)", names[k]));
  }
  c.commit(Flow::Manual);
  std::vector<SortElem> out;
  for (uint32_t r = 0; r < reps; ++r) {
    std::vector<std::vector<SortElem>> in(nq);
    for (int k = 0; k < nq; ++k) {
      const uint64_t base = uint64_t(r) * total;  // contiguous queues: repeat r starts total elements later
      for (uint32_t i = 0; i < p.elementLengths[k]; ++i) in[k].push_back(read_elem<T>(q[k]->m_, base + i));
    }
    size_t head[4] = {0, 0, 0, 0};
    out.clear();
    for (;;) {
      int best = -1;
      for (int k = 0; k < nq; ++k)
        if (head[k] < in[k].size() && (best < 0 || in[k][head[k]].score > in[best][head[best]].score)) best = k;
      if (best < 0) break;
      out.push_back(in[best][head[best]++]);
      if (p.ifExhaustedSuspension && head[best] == in[best].size()) break;
    }
    for (size_t i = 0; i < out.size(); ++i) write_elem(dst.m_, uint64_t(r) * total + i, out[i]);
    for (int k = 0; k < nq; ++k) res.used[k] = static_cast<uint16_t>(head[k]);
  }
  sort_stats(out.size() * reps, reps);
  return res;
}

}  // namespace opkit_emu

namespace AscendC {

template <typename T>
void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
            const int32_t repeatTime, OPKIT_LOC) {
  OPKIT_EMU_SORT_T(T, "Sort32");
  opkit_emu::sort32(dst, src0, src1, repeatTime, "Sort32", loc);
}

template <typename T>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params, OPKIT_LOC) {
  OPKIT_EMU_SORT_T(T, "MrgSort");
  const opkit_emu::MergeResult r = opkit_emu::mrg_sort(dst, src, params, "MrgSort", loc);
  std::memcpy(opkit_emu::ctx().mrg_sort_used, r.used, sizeof r.used);
}

template <typename T, bool isExhaustedSuspension = false>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
             uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime, OPKIT_LOC) {
  OPKIT_EMU_SORT_T(T, "MrgSort");
  const MrgSort4Info info(elementCountList, isExhaustedSuspension, validBit, static_cast<uint16_t>(repeatTime));
  const opkit_emu::MergeResult r = opkit_emu::mrg_sort(dst, sortList, info, "MrgSort", loc);
  std::memcpy(opkit_emu::ctx().mrg_sort_used, r.used, sizeof r.used);
  if (isExhaustedSuspension)
    for (int k = 0; k < 4; ++k) sortedNum[k] = r.used[k];
}

inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3,
                             uint16_t& mrgSortList4) {
  const uint16_t* u = opkit_emu::ctx().mrg_sort_used;
  mrgSortList1 = u[0];
  mrgSortList2 = u[1];
  mrgSortList3 = u[2];
  mrgSortList4 = u[3];
}

template <typename T>
void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp, const int32_t repeatTime,
            OPKIT_LOC) {
  OPKIT_EMU_SORT_T(T, "Concat");
  (void)tmp;
  if (repeatTime < 0 || repeatTime > 255)
    opkit_emu::fail("api-argument", "Concat", loc, opkit_emu::strf("repeatTime %d is outside [0, 255]", repeatTime));
  concat = src;
}

template <typename T>
void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
             const int32_t repeatTime, OPKIT_LOC) {
  using namespace opkit_emu;
  OPKIT_EMU_SORT_T(T, "Extract");
  const char* call = "Extract";
  if (repeatTime < 0 || repeatTime > 255) fail("api-argument", call, loc, strf("repeatTime %d is outside [0, 255]", repeatTime));
  const uint32_t n = static_cast<uint32_t>(repeatTime) * 32;
  if (n == 0) return;
  ApiCall c(Pipe::V, call, loc);
  c.dst(dstValue, n, "dstValue").dst(dstIndex, n, "dstIndex").read(sorted.m_, 0, n, 64, "sorted");
  const bool poisoned = c.commit(Flow::Manual);
  for (uint32_t i = 0; i < n; ++i) {
    const SortElem e = read_elem<T>(sorted.m_, i);
    std::memcpy(dstValue.data() + i, e.bytes, sizeof(T));
    std::memcpy(dstIndex.data() + i, e.bytes + 4, 4);
    const bool vb = poisoned && shadow_first_hole(sorted.m_.ub_off() + i * 8, sizeof(T)) >= 0;
    const bool ib = poisoned && shadow_first_hole(sorted.m_.ub_off() + i * 8 + 4, 4) >= 0;
    shadow_fill(dstValue.m_.ub_off() + i * static_cast<uint32_t>(sizeof(T)), sizeof(T), !vb);
    shadow_fill(dstIndex.m_.ub_off() + i * 4, 4, !ib);
  }
  sort_stats(n, static_cast<uint64_t>(repeatTime));
}

template <typename T, bool isFullSort>
void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
          LocalTensor<T>& tmp, const int32_t repeatTime, OPKIT_LOC) {
  using namespace opkit_emu;
  OPKIT_EMU_SORT_T(T, "Sort");
  sort32(dst, concat, index, repeatTime, "Sort", loc);
  if (!isFullSort || repeatTime <= 1) {
    if (isFullSort && repeatTime == 1) {  // CANN's DoFullSort still leaves tmp holding the result
      ApiCall(Pipe::V, "Sort", loc).write(tmp.m_, 0, 32, 64, "tmp").read(dst.m_, 0, 32, 64, "dst").commit();
      std::memcpy(tmp.m_.addr, dst.m_.addr, 32 * 8);
    }
    return;
  }
  const uint32_t n = static_cast<uint32_t>(repeatTime) * 32;
  ApiCall c(Pipe::V, "Sort", loc);
  c.write(tmp.m_, 0, n, 64, "tmp").write(dst.m_, 0, n, 64, "dst").read(dst.m_, 0, n, 64, "dst");
  c.commit(Flow::Manual);
  std::vector<SortElem> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = read_elem<T>(dst.m_, i);
  // Each repeat is sorted; merging them (queues in repeat order, ties to the earlier queue) is a stable sort.
  std::stable_sort(v.begin(), v.end(), [](const SortElem& a, const SortElem& b) { return a.score > b.score; });
  for (uint32_t i = 0; i < n; ++i) {
    write_elem(dst.m_, i, v[i]);
    write_elem(tmp.m_, i, v[i]);
  }
  sort_stats(n, static_cast<uint64_t>(repeatTime));
}

template <typename T>
inline uint32_t GetSortOffset(const uint32_t elemOffset) {
  OPKIT_EMU_SORT_T(T, "GetSortOffset");
  return elemOffset * (std::is_same<T, half>::value ? 4 : 2);
}
template <typename T>
inline uint32_t GetSortLen(const uint32_t elemCount) {
  OPKIT_EMU_SORT_T(T, "GetSortLen");
  return elemCount * (std::is_same<T, half>::value ? 4 : 2);
}

}  // namespace AscendC
