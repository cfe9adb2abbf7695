// CANN's lib/reduce/reduce.h (asc-devkit 82b89a15 include/adv_api/reduce/reduce.h; the patterns include/adv_api/
// reduce/reduce_common.h:25-51; pages docs/zh/api/SIMD-API/高阶API/归约操作/ReduceMax接口/ReduceMax接口.md,
// ReduceMin...): the pattern-templated reductions of a [first, last] ND tensor whose rows are padded to 32 bytes
// (padLast = last rounded up to 32 / sizeof(T)), half and float, with and without sharedTmpBuffer:
//   template <class T, class pattern, bool isReuseSource = false>
//   ReduceMax / ReduceMin(dst, src[, sharedTmpBuffer], const uint32_t srcShape[] {first, last}, bool srcInnerPad)
// Pattern::Reduce::AR: dst[i] = max (min) of row i's first `last` elements, `first` results; RA: dst[j] = max (min)
// of column j over the `first` rows, `last` results (A2 code impl/adv_api/detail/reduce/reduce_max/
// reduce_max_v220_impl.h:30-57: BlockReduceByLastAxis / BinaryReduceByFirstAxis of reduce_common_util_v220_impl.h,
// the element-wise Max / Min of vector.h's OpMax / OpMin: a NaN lane gives NaN). Max and min do not round: the
// result is the device's whatever the pairing order, except which zero (+0 or -0) a row of both zeros yields;
// RA's results leave through Adds(x, 0), so a -0 there is +0 (reduce_common_util_v220_impl.h:511, 525).
// isReuseSource: src holds CANN's partial results afterwards -- poison on the emulator.
// Checked: T other than half / float and patterns other than AR / RA are compile errors (CANN's static_asserts);
// srcInnerPad false (A2: "isSrcInnerPad must be true on this platform", impl/adv_api/tiling/reduce/
// reduce_tiling.cpp:60-64), first or last 0, tensors too small (api-argument); a sharedTmpBuffer below
// GetReduceMaxMaxMinTmpSize's size (reduce_tiling.cpp:82-110: AR 0 for last <= 32 / sizeof(T), first x 32 bytes
// below one repeat, first x 256 bytes from one repeat; RA k x align32(last x sizeof(T)), k the largest power of two
// below first, first itself at 1 -- 0 with isReuseSource) is tensor-bounds.
// ReduceSum<float, pattern> (float only on A2), in the A2 order (impl/adv_api/detail/reduce/reduce_sum/
// reduce_sum_v220_impl.h:30-311, the adds as the emulator's level-0 instructions make them: WholeReduceSum /
// BlockReduceSum an adjacent-pair tree with masked lanes 0, PairReduceSum adjacent pairs): AR, per row -- last <= 8:
// one BlockReduceSum; last <= 64: one WholeReduceSum; longer: splitK the largest power of two <= last, per = splitK
// (splitK / 2 when last is a power of two), t = row[0, per) + row[per, per + tail) element-wise (tail = last -
// splitK, or padLast - per), t halved by PairReduceSum down to 64, then a BlockReduceSum to 8 and one to 1. RA, per
// column: the rows beyond the largest power of two k <= first added onto the first ones, then halving (row r + row r
// + k/2, ...) down to one row (BinaryReduceByFirstAxis). Bitwise the device's order as read (not checked on a
// device). Its buffer (reduce_tiling.cpp:121-150): AR 0 for last <= 64, else first x k x 4 (k = the power of two <=
// last, halved when equal and first > 1); RA k x padLast x 4 (k for first likewise).
// ReduceMean<float, pattern> (float only on A2: ReduceMean.md; GetReduceMeanMaxMinTmpSize refuses other types,
// reduce_tiling.cpp:329-331 -- CANN's kernel itself accepts half, reduce_mean_v220_impl.h:42-43, so the emulator's
// compile error for half is its own, not CANN's static_assert): ReduceSum's order, then one Muls by the float 1 / last
// (AR) or 1 / first (RA) (reduce_mean_v220_impl.h:49-64); its buffer ReduceSum's. ReduceProd<float, pattern> (ReduceProd.md): AR as
// ReduceProdByLastAxis multiplies a row (reduce_prod_v220_impl.h:34-128, see reduce_prod_ar_row), RA
// BinaryReduceByFirstAxis with Mul (ReduceSum's RA order); both leave through Adds(x, 0); buffer reduce_tiling.cpp:
// 181-212 (AR 256 bytes even with isReuseSource). ReduceAny / ReduceAll<float | uint8_t, pattern>: the source may
// hold only 0 or 1 (the pages' constraint; any other value is api-argument), the result the logical or / and, which
// is what A2's max / min (Or / And for uint8_t RA) give on such input; buffers reduce_tiling.cpp:155-179. uint8_t RA
// with an odd last also writes dst[last], the bitwise Or / And of the rows' padding byte (A2 reduces int16 lanes).
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it

namespace AscendC {
namespace Pattern {
namespace Reduce {
// the tag types (reduce_common.h:33-48); the emulator reads only which one a call names
struct R {};
struct RA {};
struct AR {};
struct ARA {};
struct ARAR {};
struct ARARA {};
struct ARARAR {};
struct ARARARA {};
struct ARARARAR {};
struct ARARARARA {};
struct RAR {};
struct RARA {};
struct RARAR {};
struct RARARA {};
struct RARARAR {};
struct RARARARA {};
}  // namespace Reduce
}  // namespace Pattern
}  // namespace AscendC

namespace opkit_emu {
// GetReduceMax/MinMaxMinTmpSize (reduce_tiling.cpp:82-110, not the binary-add branch), bytes
inline uint32_t reduce_pattern_tmp(bool ar, uint32_t first, uint32_t last, uint32_t size) {
  if (ar) {
    const uint32_t blk = 32 / size, rep = 256 / size;
    return last <= blk ? 0 : last < rep ? first * blk * size : first * rep * size;
  }
  uint32_t k = 1;
  for (uint32_t n = first; n > 1; n >>= 1) k <<= 1;
  if (k == first && first > 1) k >>= 1;
  return k * ((last * size + 31) / 32 * 32);
}

// Which outputs a poisoned source lane reaches (empty when nothing is poisoned): a row's under AR, a column's under RA.
inline std::vector<uint8_t> pattern_poisoned_outputs(ApiCall& c, bool ar, uint32_t first, uint32_t last, uint32_t pad,
                                                     uint64_t nd) {
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(nd, 0);
    for (uint32_t i = 0; i < first; ++i)
      for (uint32_t j = 0; j < last; ++j)
        if (ApiCall::lane_poisoned(c.operand(0), uint64_t(i) * pad + j)) bad[ar ? i : j] = 1;
  }
  return bad;
}

// The A2 checks both pattern reductions make on {first, last}: rows padded to 32 bytes (srcInnerPad), no empty axis,
// src / dst large enough; returns the padded row length and the element counts.
struct PatternShape {
  uint32_t first, last, pad;
  uint64_t n, nd;
};
template <class T>
PatternShape pattern_shape(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                           const uint32_t shape[], bool inner_pad, bool ar, SrcLoc loc) {
  if (shape == nullptr) fail("api-argument", api, loc, "srcShape is null: pass {first, last}");
  const uint32_t first = shape[0], last = shape[1];
  constexpr uint32_t blk = kBlk / sizeof(T);
  const uint32_t pad = (last + blk - 1) / blk * blk;
  if (!inner_pad)
    fail("api-argument", api, loc,
         "srcInnerPad false: on A2 the rows must be padded to 32 bytes (reduce_tiling.cpp: \"isSrcInnerPad must be "
         "true on this platform\")");
  if (first == 0 || last == 0) fail("api-argument", api, loc, strf("srcShape {%u, %u} has an empty axis", first, last));
  const uint64_t n = uint64_t(first) * pad, nd = ar ? first : last;
  if (src.GetSize() < n || dst.GetSize() < nd)
    fail("api-argument", api, loc,
         strf("srcShape {%u, %u} (rows padded to %u): src holds %u (need %llu), dst %u (need %llu)", first, last, pad,
              src.GetSize(), static_cast<unsigned long long>(n), dst.GetSize(), static_cast<unsigned long long>(nd)));
  return {first, last, pad, n, nd};
}

template <class T, class pattern, bool reuse, class Op>
void adv_reduce_pattern(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                        const AscendC::LocalTensor<uint8_t>* tmp, const uint32_t shape[], bool inner_pad,
                        SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "failed to check the data type, current api supports data type is half/float! (ReduceMax / ReduceMin "
                "on A2)");
  constexpr bool ar = std::is_same<pattern, AscendC::Pattern::Reduce::AR>::value;
  static_assert(ar || std::is_same<pattern, AscendC::Pattern::Reduce::RA>::value,
                "failed to check the reduce pattern, it only supports AR/RA pattern! (ReduceMax / ReduceMin on A2)");
  const PatternShape ps = pattern_shape<T>(api, dst, src, shape, inner_pad, ar, loc);
  const uint32_t first = ps.first, last = ps.last, pad = ps.pad;
  const uint64_t n = ps.n, nd = ps.nd;
  if (tmp && !reuse) {
    const uint32_t need = reduce_pattern_tmp(ar, first, last, sizeof(T));
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes Get%sMaxMinTmpSize gives for srcShape {%u, %u}",
                tmp->GetSize(), need, api, first, last));
  }
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, nd, "dstTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const std::vector<uint8_t> bad = pattern_poisoned_outputs(c, ar, first, last, pad, nd);
  ctx().stats.vector_elems += n;
  const T* s = src.data();
  std::vector<T> out(nd);
  for (uint64_t o = 0; o < nd; ++o) {
    T v = ar ? s[o * pad] : s[o];
    for (uint32_t q = 1; q < (ar ? last : first); ++q) v = Op::ap(v, ar ? s[o * pad + q] : s[uint64_t(q) * pad + o]);
    // RA ends with Adds(dst, x, 0) (reduce_common_util_v220_impl.h:511, 525): -0 becomes +0
    if (!ar && to_f(v) == 0.0f) v = from_f<T>(0.0f);
    out[o] = v;
  }
  for (uint64_t o = 0; o < nd; ++o) dst.data()[o] = out[o];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t o = 0; o < nd; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * sizeof(T)), sizeof(T), bad.empty() || !bad[o]);
  if (reuse) shadow_fill(src.m_.ub_off(), static_cast<uint32_t>(n * sizeof(T)), false);  // CANN's partial results
}
// GetReduceSumMaxMinTmpSize (reduce_tiling.cpp:121-150), bytes
inline uint32_t reduce_sum_pattern_tmp(bool ar, uint32_t first, uint32_t last) {
  auto findk = [](uint32_t n) { uint32_t k = 1; for (; n > 1; n >>= 1) k <<= 1; return k; };
  if (ar) {
    uint32_t k = findk(last);
    if (k == last && first > 1) k >>= 1;
    return last <= 64 ? 0 : first * k * 4;
  }
  uint32_t k = findk(first);
  if (k == first && first > 1) k >>= 1;
  return k * ((last + 7) / 8 * 8) * 4;
}
// an adjacent-pair tree over n (8 or 64) lanes, v[n..] read as 0
inline float pair_tree(const float* v, uint32_t valid, uint32_t n) {
  float b[64];
  for (uint32_t i = 0; i < n; ++i) b[i] = i < valid ? v[i] : 0.0f;
  for (uint32_t w = n; w > 1; w /= 2)
    for (uint32_t i = 0; i < w / 2; ++i) b[i] = b[2 * i] + b[2 * i + 1];
  return b[0];
}
inline float reduce_sum_ar_row(const float* x, uint32_t last, uint32_t pad) {
  if (last <= 8) return pair_tree(x, last, 8);
  if (last <= 64) return pair_tree(x, last, 64);
  uint32_t split = 1;
  while (split * 2 <= last) split *= 2;
  const uint32_t per = last == split ? split / 2 : split, tail = last - split ? last - split : pad - per;
  std::vector<float> t(x, x + per);
  for (uint32_t j = 0; j < tail; ++j) t[j] = t[j] + x[per + j];
  for (uint32_t k = per; k > 64; k /= 2)
    for (uint32_t i = 0; i < k / 2; ++i) t[i] = t[2 * i] + t[2 * i + 1];
  float blk[8];
  for (uint32_t b = 0; b < 8; ++b) blk[b] = pair_tree(t.data() + 8 * b, 8, 8);
  return pair_tree(blk, 8, 8);
}

// mean: ReduceMean, ReduceSum's order then one Muls by 1 / last (AR) or 1 / first (RA), the reciprocal a float
// (reduce_mean_v220_impl.h:49-64)
template <class T, class pattern, bool reuse, bool mean = false>
void adv_reduce_sum_pattern(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                            const AscendC::LocalTensor<uint8_t>* tmp, const uint32_t shape[], bool inner_pad,
                            SrcLoc loc) {
  static_assert(std::is_same<T, float>::value,
                "failed to check the data type, current api supports data type is float! (ReduceSum / ReduceMean with "
                "a pattern, A2: ReduceMean.md, reduce_tiling.cpp:329-331)");
  constexpr bool ar = std::is_same<pattern, AscendC::Pattern::Reduce::AR>::value;
  static_assert(ar || std::is_same<pattern, AscendC::Pattern::Reduce::RA>::value,
                "failed to check the reduce pattern, it only supports AR/RA pattern! (ReduceSum / ReduceMean on A2)");
  const char* api = mean ? "ReduceMean" : "ReduceSum";
  const PatternShape ps = pattern_shape<T>(api, dst, src, shape, inner_pad, ar, loc);
  const uint32_t first = ps.first, last = ps.last, pad = ps.pad;
  const uint64_t n = ps.n, nd = ps.nd;
  if (tmp && !reuse && tmp->GetSize() < reduce_sum_pattern_tmp(ar, first, last))
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes Get%sMaxMinTmpSize gives for srcShape {%u, %u}",
              tmp->GetSize(), reduce_sum_pattern_tmp(ar, first, last), api, first, last));
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, nd, "dstTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const std::vector<uint8_t> bad = pattern_poisoned_outputs(c, ar, first, last, pad, nd);
  ctx().stats.vector_elems += n;
  const float* x = src.data();
  std::vector<float> out(nd);
  if (ar) {
    for (uint32_t i = 0; i < first; ++i) out[i] = reduce_sum_ar_row(x + uint64_t(i) * pad, last, pad);
  } else {
    uint32_t k = 1;
    while (k * 2 <= first) k *= 2;
    std::vector<float> t(x, x + uint64_t(k) * pad);
    for (uint64_t e = 0; e < uint64_t(first - k) * pad; ++e) t[e] = t[e] + x[uint64_t(k) * pad + e];
    for (; k > 1; k /= 2)
      for (uint64_t e = 0; e < uint64_t(k / 2) * pad; ++e) t[e] = t[e] + t[uint64_t(k / 2) * pad + e];
    for (uint32_t j = 0; j < last; ++j) out[j] = t[j] + 0.0f;  // the closing Adds(dst, x, 0), :525
  }
  if (mean) {
    const float r = 1.0f / static_cast<float>(static_cast<int32_t>(ar ? last : first));
    for (uint64_t o = 0; o < nd; ++o) out[o] = out[o] * r;
  }
  for (uint64_t o = 0; o < nd; ++o) dst.data()[o] = out[o];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t o = 0; o < nd; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * 4), 4, bad.empty() || !bad[o]);
  if (reuse) shadow_fill(src.m_.ub_off(), static_cast<uint32_t>(n * 4), false);  // CANN's partial results
}
// GetReduceProdMaxMinTmpSize (reduce_tiling.cpp:181-212), bytes: AR (max(8, k) + first x 8) x 4 + 256 (k the power
// of two <= last, halved when equal and first > 1), 256 with isReuseSource; RA as Max's (0 with isReuseSource)
inline uint32_t reduce_prod_pattern_tmp(bool ar, uint32_t first, uint32_t last, bool reuse) {
  if (reuse) return ar ? 256 : 0;
  if (!ar) return reduce_pattern_tmp(false, first, last, 4);
  uint32_t k = 1;
  for (uint32_t n = last; n > 1; n >>= 1) k <<= 1;
  if (k == last && first > 1) k >>= 1;
  return ((k > 8 ? k : 8) + first * 8) * 4 + 256;
}
// One row's product as ReduceProdByLastAxis multiplies it (reduce_prod_v220_impl.h:34-128): splitK the largest
// power of two <= last, the rest multiplied onto the first lanes (or, last a power of two above 8, the halves),
// halving down to 8 lanes, then the 8 lanes broadcast to blocks (Brcb) and halved down to one; a row shorter than
// 8 folds its lanes beyond splitK first. The result leaves through Adds(x, 0): a -0 is +0 (:126).
inline float reduce_prod_ar_row(const float* x, uint32_t last) {
  uint32_t split = 1;
  while (split * 2 <= last) split *= 2;
  const uint32_t remain = last - split;
  float cur[8];
  std::vector<float> t;
  uint32_t k = split;
  if (last >= 8 && remain != 0) {
    t.assign(x, x + split);
    for (uint32_t i = 0; i < remain; ++i) t[i] = t[i] * x[split + i];
  } else if (split > 8) {
    k = split / 2;
    t.resize(k);
    for (uint32_t i = 0; i < k; ++i) t[i] = x[i] * x[k + i];
  } else {
    t.assign(x, x + last);
  }
  while (k > 8) {
    k /= 2;
    for (uint32_t i = 0; i < k; ++i) t[i] = t[i] * t[k + i];
  }
  for (uint32_t b = 0; b < 8; ++b) cur[b] = b < t.size() ? t[b] : 1.0f;  // lanes past the row are never read
  uint32_t fin = last < 8 ? split : 8;
  if (split != last && fin < 8)
    for (uint32_t b = 0; b < remain; ++b) cur[b] = cur[b] * cur[split + b];
  while (fin > 1) {
    fin /= 2;
    for (uint32_t b = 0; b < fin; ++b) cur[b] = cur[b] * cur[fin + b];
  }
  return cur[0] + 0.0f;
}

template <class T, class pattern, bool reuse>
void adv_reduce_prod_pattern(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                             const AscendC::LocalTensor<uint8_t>* tmp, const uint32_t shape[], bool inner_pad,
                             SrcLoc loc) {
  static_assert(std::is_same<T, float>::value,
                "failed to check the data type, current api supports data type is float! (ReduceProd with a pattern, "
                "A2: ReduceProd.md)");
  constexpr bool ar = std::is_same<pattern, AscendC::Pattern::Reduce::AR>::value;
  static_assert(ar || std::is_same<pattern, AscendC::Pattern::Reduce::RA>::value,
                "failed to check the reduce pattern, it only supports AR/RA pattern! (ReduceProd on A2)");
  const char* api = "ReduceProd";
  const PatternShape ps = pattern_shape<T>(api, dst, src, shape, inner_pad, ar, loc);
  const uint32_t first = ps.first, last = ps.last, pad = ps.pad;
  const uint64_t n = ps.n, nd = ps.nd;
  const uint32_t need = reduce_prod_pattern_tmp(ar, first, last, reuse);
  if (tmp && tmp->GetSize() < need)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetReduceProdMaxMinTmpSize gives for srcShape {%u, "
              "%u}", tmp->GetSize(), need, first, last));
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, nd, "dstTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const std::vector<uint8_t> bad = pattern_poisoned_outputs(c, ar, first, last, pad, nd);
  ctx().stats.vector_elems += n;
  const float* x = src.data();
  std::vector<float> out(nd);
  if (ar) {
    for (uint32_t i = 0; i < first; ++i) out[i] = reduce_prod_ar_row(x + uint64_t(i) * pad, last);
  } else {  // BinaryReduceByFirstAxis with Mul (reduce_common_util_v220_impl.h:467-530), as ReduceSum's RA
    uint32_t k = 1;
    while (k * 2 <= first) k *= 2;
    std::vector<float> t(x, x + uint64_t(k) * pad);
    for (uint64_t e = 0; e < uint64_t(first - k) * pad; ++e) t[e] = t[e] * x[uint64_t(k) * pad + e];
    for (; k > 1; k /= 2)
      for (uint64_t e = 0; e < uint64_t(k / 2) * pad; ++e) t[e] = t[e] * t[uint64_t(k / 2) * pad + e];
    for (uint32_t j = 0; j < last; ++j) out[j] = t[j] + 0.0f;  // the closing Adds(dst, x, 0)
  }
  for (uint64_t o = 0; o < nd; ++o) dst.data()[o] = out[o];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t o = 0; o < nd; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * 4), 4, bad.empty() || !bad[o]);
  if (reuse) shadow_fill(src.m_.ub_off(), static_cast<uint32_t>(n * 4), false);  // CANN's partial results
}

// GetReduceAny/AllMaxMinTmpSize (reduce_tiling.cpp:155-179, 266-300), bytes: float as ReduceMax's; uint8_t AR
// align32(last) x 2 + first x 32 (isReuseSource too), RA k x align32(last) (0 with isReuseSource)
inline uint32_t reduce_anyall_pattern_tmp(bool ar, uint32_t first, uint32_t last, uint32_t size, bool reuse) {
  if (size == 4) return reuse ? 0 : reduce_pattern_tmp(ar, first, last, 4);
  if (ar) return (last + 31) / 32 * 32 * 2 + first * 32;
  return reuse ? 0 : reduce_pattern_tmp(false, first, last, 1);
}
// ReduceAny (any = true) / ReduceAll on 0 / 1 inputs (ReduceAny.md, ReduceAll.md: "源操作数srcTensor的输入数据只能为0或
// 1"): A2 takes the max / min (float: BlockReduceByLastAxis / BinaryReduceByFirstAxis with Max / Min; uint8_t AR
// through half, RA a bitwise Or / And of int16 pairs: reduce_any_v220_impl.h:50-79), on 0 / 1 the logical or / and.
template <class T, class pattern, bool reuse, bool any>
void adv_reduce_anyall_pattern(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                               const AscendC::LocalTensor<uint8_t>* tmp, const uint32_t shape[], bool inner_pad,
                               SrcLoc loc) {
  static_assert(std::is_same<T, float>::value || std::is_same<T, uint8_t>::value,
                "failed to check the data type, current api supports data type is float/uint8_t! (ReduceAny / "
                "ReduceAll on A2)");
  constexpr bool ar = std::is_same<pattern, AscendC::Pattern::Reduce::AR>::value;
  static_assert(ar || std::is_same<pattern, AscendC::Pattern::Reduce::RA>::value,
                "failed to check the reduce pattern, it only supports AR/RA pattern! (ReduceAny / ReduceAll on A2)");
  const char* api = any ? "ReduceAny" : "ReduceAll";
  const PatternShape ps = pattern_shape<T>(api, dst, src, shape, inner_pad, ar, loc);
  const uint32_t first = ps.first, last = ps.last, pad = ps.pad;
  const uint64_t n = ps.n, nd = ps.nd;
  const uint32_t need = reduce_anyall_pattern_tmp(ar, first, last, sizeof(T), reuse);
  if (tmp && tmp->GetSize() < need)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes Get%sMaxMinTmpSize gives for srcShape {%u, %u}",
              tmp->GetSize(), need, api, first, last));
  const T* s = src.data();
  // uint8_t RA with an odd last: A2 reduces int16 lanes, (last + 1) / 2 of them (reduce_any_v220_impl.h:61-67,
  // reduce_all_v220_impl.h alike), so it also writes dst[last], the bitwise Or / And of the rows' padding byte
  // `last`; modelled when dst holds that byte (else the device writes past dst: not modelled)
  const bool odd_byte = std::is_same<T, uint8_t>::value && !ar && last % 2 && dst.GetSize() > nd;
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, nd + odd_byte, "dstTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const std::vector<uint8_t> bad = pattern_poisoned_outputs(c, ar, first, last, pad, nd);
  bool odd_bad = false;
  uint8_t odd_val = any ? 0 : 0xff;
  for (uint32_t q = 0; odd_byte && q < first; ++q) {
    const uint64_t e = uint64_t(q) * pad + last;
    odd_val = any ? uint8_t(odd_val | uint8_t(s[e])) : uint8_t(odd_val & uint8_t(s[e]));
    odd_bad = odd_bad || (!bad.empty() && ApiCall::lane_poisoned(c.operand(0), e));
  }
  for (uint32_t i = 0; i < first; ++i)
    for (uint32_t j = 0; j < last; ++j) {
      const uint64_t e = uint64_t(i) * pad + j;
      if (!bad.empty() && ApiCall::lane_poisoned(c.operand(0), e)) continue;  // no value: it poisons its result
      const float v = static_cast<float>(s[e]);
      if (v != 0.0f && v != 1.0f)
        fail("api-argument", api, loc,
             strf("srcTensor[%u][%u] is %g: the source may hold only 0 or 1 (%s.md)", i, j, double(v), api));
    }
  ctx().stats.vector_elems += n;
  for (uint64_t o = 0; o < nd; ++o) {
    bool r = !any;
    for (uint32_t q = 0; q < (ar ? last : first); ++q) {
      const bool one = static_cast<float>(ar ? s[o * pad + q] : s[uint64_t(q) * pad + o]) != 0.0f;
      r = any ? (r || one) : (r && one);
    }
    dst.data()[o] = static_cast<T>(r ? 1 : 0);
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t o = 0; o < nd; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * sizeof(T)), sizeof(T), bad.empty() || !bad[o]);
  if (odd_byte) {
    dst.data()[nd] = static_cast<T>(odd_val);
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(nd), 1, !odd_bad);
  }
  if (reuse) shadow_fill(src.m_.ub_off(), static_cast<uint32_t>(n * sizeof(T)), false);  // CANN's partial results
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_REDUCE_PATTERN(NAME, OP)                                                                          \
  template <class T, class pattern, bool isReuseSource = false>                                                     \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                        \
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad, OPKIT_LOC) {   \
    ::opkit_emu::adv_reduce_pattern<T, pattern, isReuseSource, ::opkit_emu::OP>(#NAME, dstTensor, srcTensor,        \
                                                                              &sharedTmpBuffer, srcShape,           \
                                                                              srcInnerPad, loc);                    \
  }                                                                                                                 \
  template <class T, class pattern, bool isReuseSource = false>                                                     \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],             \
            bool srcInnerPad, OPKIT_LOC) {                                                                          \
    ::opkit_emu::adv_reduce_pattern<T, pattern, isReuseSource, ::opkit_emu::OP>(#NAME, dstTensor, srcTensor,        \
                                                                              nullptr, srcShape, srcInnerPad, loc); \
  }
OPKIT_EMU_REDUCE_PATTERN(ReduceMax, OpMax)
OPKIT_EMU_REDUCE_PATTERN(ReduceMin, OpMin)
#undef OPKIT_EMU_REDUCE_PATTERN
template <class T, class pattern, bool isReuseSource = false>
void ReduceSum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad, OPKIT_LOC) {
  ::opkit_emu::adv_reduce_sum_pattern<T, pattern, isReuseSource>(dstTensor, srcTensor, &sharedTmpBuffer, srcShape,
                                                                 srcInnerPad, loc);
}
template <class T, class pattern, bool isReuseSource = false>
void ReduceSum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],
               bool srcInnerPad, OPKIT_LOC) {
  ::opkit_emu::adv_reduce_sum_pattern<T, pattern, isReuseSource>(dstTensor, srcTensor, nullptr, srcShape, srcInnerPad,
                                                                 loc);
}
#define OPKIT_EMU_REDUCE_PATTERN_FN(NAME, IMPL)                                                                     \
  template <class T, class pattern, bool isReuseSource = false>                                                     \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                        \
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad, OPKIT_LOC) {   \
    IMPL(dstTensor, srcTensor, &sharedTmpBuffer, srcShape, srcInnerPad, loc);                                        \
  }                                                                                                                 \
  template <class T, class pattern, bool isReuseSource = false>                                                     \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],             \
            bool srcInnerPad, OPKIT_LOC) {                                                                          \
    IMPL(dstTensor, srcTensor, nullptr, srcShape, srcInnerPad, loc);                                                 \
  }
OPKIT_EMU_REDUCE_PATTERN_FN(ReduceMean, (::opkit_emu::adv_reduce_sum_pattern<T, pattern, isReuseSource, true>))
OPKIT_EMU_REDUCE_PATTERN_FN(ReduceProd, (::opkit_emu::adv_reduce_prod_pattern<T, pattern, isReuseSource>))
OPKIT_EMU_REDUCE_PATTERN_FN(ReduceAny, (::opkit_emu::adv_reduce_anyall_pattern<T, pattern, isReuseSource, true>))
OPKIT_EMU_REDUCE_PATTERN_FN(ReduceAll, (::opkit_emu::adv_reduce_anyall_pattern<T, pattern, isReuseSource, false>))
#undef OPKIT_EMU_REDUCE_PATTERN_FN
}  // namespace AscendC
