// ReduceSum / ReduceMax / ReduceMin, count form with the shared tmp buffer. Facts sheet §3 "Reductions":
// tree sum of adjacent pairs inside each 256-byte repeat, repeat results added sequentially (A2 count form);
// max/min write [value, index] with the index in T's bit pattern, first index wins on ties. dst needs the
// result's alignment only (reduce_dst_align).
#pragma once
#include "opkit_emu/vector.h"

namespace opkit_emu {

template <class> inline constexpr bool reduce_spr_false = false;

template <class T> inline constexpr bool is_reduce_t =
    std::is_same<T, half>::value || std::is_same<T, float>::value || (is_bf16_v<T> && kAllowBf16Math && !kIs310P);

template <class T> OPKIT_EMU_INLINE float rnd(float x) {
  if constexpr (std::is_same<T, float>::value) return x;
  else return to_f(from_f<T>(x));
}

// One 256-byte repeat: adjacent pairs summed level by level (ping-pong buffers so each level vectorises).
template <class T>
OPKIT_EMU_INLINE float tree_repeat(const T* q, uint32_t m) {
  constexpr uint32_t R = kRepeat / sizeof(T);
  float a[R / 2], b[R / 4];
  if (m == R) {
    for (uint32_t i = 0; i < R / 2; ++i) a[i] = rnd<T>(fadd(to_f(q[2 * i]), to_f(q[2 * i + 1])));
  } else {  // masked-off lanes contribute 0
    for (uint32_t i = 0; i < R / 2; ++i) {
      float x = 2 * i < m ? to_f(q[2 * i]) : 0.0f, y = 2 * i + 1 < m ? to_f(q[2 * i + 1]) : 0.0f;
      a[i] = rnd<T>(fadd(x, y));
    }
  }
  uint32_t w = R / 4;
  while (true) {
    for (uint32_t i = 0; i < w; ++i) b[i] = rnd<T>(fadd(a[2 * i], a[2 * i + 1]));
    if (w == 1) return b[0];
    w /= 2;
    for (uint32_t i = 0; i < w; ++i) a[i] = rnd<T>(fadd(b[2 * i], b[2 * i + 1]));
    if (w == 1) return a[0];
    w /= 2;
  }
}

// float fast path: the same adjacent-pair tree with 4-lane vectors (even/odd lane shuffles). Each add's NaN is
// the NaN rule's (nan_rule.h): the compiler may swap a commutative add's operands, and an x86 add returns its
// first operand's NaN.
typedef float v4f_ __attribute__((vector_size(16)));
typedef int v4i_ __attribute__((vector_size(16)));
OPKIT_EMU_INLINE float tree_repeat_f32(const float* q) {
  v4f_ v[16];
  std::memcpy(v, q, sizeof v);
  for (int w = 16; w > 1; w /= 2)
    for (int k = 0; k < w / 2; ++k) {
      const v4f_ a = v[2 * k], b = v[2 * k + 1];
      const v4f_ e = __builtin_shuffle(a, b, v4i_{0, 2, 4, 6}), o = __builtin_shuffle(a, b, v4i_{1, 3, 5, 7});
      v[k] = vnan_rule<v4f_, v4i_>(e + o, e, o);
    }
  return fadd(fadd(v[0][0], v[0][1]), fadd(v[0][2], v[0][3]));
}

// float, whole repeats: the same adjacent-pair trees for up to 16 repeats at once, level by level across them. A
// level pairs element 2i with 2i+1 of the level below; a repeat's 64 lanes halve to 32, ..., 1, so no pair crosses
// two repeats and each pair is the one tree_repeat_f32 adds (the left one src0): the same sums, the same bits, but
// every level runs in the widest vectors the build has (a repeat alone leaves its last levels on 1-2 lanes, a chain
// of dependent shuffles: ~24 % of a small LayerNorm call's samples went there). Used in 32- and 64-byte builds only
// (reduce_sum_loop below).
#if defined(__AVX512F__)
typedef float vsumf_ __attribute__((vector_size(64)));
typedef int vsumi_ __attribute__((vector_size(64)));
#define OPKIT_EMU_SUM_EVEN {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
#define OPKIT_EMU_SUM_ODD {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}
#elif defined(__AVX__)
typedef float vsumf_ __attribute__((vector_size(32)));
typedef int vsumi_ __attribute__((vector_size(32)));
#define OPKIT_EMU_SUM_EVEN {0, 2, 4, 6, 8, 10, 12, 14}
#define OPKIT_EMU_SUM_ODD {1, 3, 5, 7, 9, 11, 13, 15}
#else
typedef v4f_ vsumf_;
typedef v4i_ vsumi_;
#define OPKIT_EMU_SUM_EVEN {0, 2, 4, 6}
#define OPKIT_EMU_SUM_ODD {1, 3, 5, 7}
#endif
// out[i] = in[2i] + in[2i + 1] (the NaN rule's add, in[2i] src0) for i < m.
OPKIT_EMU_INLINE void pair_level_f32(float* out, const float* in, uint32_t m) {
  constexpr uint32_t L = sizeof(vsumf_) / sizeof(float);
  const vsumi_ even = OPKIT_EMU_SUM_EVEN, odd = OPKIT_EMU_SUM_ODD;
  uint32_t i = 0;
  for (; i + L <= m; i += L) {
    vsumf_ a, b;
    std::memcpy(&a, in + 2 * i, sizeof a);
    std::memcpy(&b, in + 2 * i + L, sizeof b);
    const vsumf_ e = __builtin_shuffle(a, b, even), o = __builtin_shuffle(a, b, odd);
    const vsumf_ r = vnan_rule<vsumf_, vsumi_>(e + o, e, o);
    std::memcpy(out + i, &r, sizeof r);
  }
  for (; i < m; ++i) out[i] = fadd(in[2 * i], in[2 * i + 1]);
}
#undef OPKIT_EMU_SUM_EVEN
#undef OPKIT_EMU_SUM_ODD
// The fewest repeats the grouping is faster for (measured, docs/emulator.md "Host ISA figures"): 2 in 64-byte
// vectors; in 32-byte ones 2-3 repeats were slower than their trees one at a time, 4 equal.
inline constexpr uint32_t kMinGroup_ = sizeof(vsumf_) >= 64 ? 2 : 4;

// float, n >= kMinGroup_ whole repeats: groups of up to 16 repeats level by level; a last group of fewer than
// kMinGroup_ repeats takes tree_repeat_f32 a repeat at a time. Its own function: the level buffers' 3 KB stack frame
// stays off the one-repeat path.
OPKIT_EMU_HOT inline float reduce_sum_groups_f32(const float* p, uint32_t n) {
  constexpr uint32_t R = kRepeat / sizeof(float), kGroup = 16;
  float a[kGroup * R / 2], b[kGroup * R / 4];
  float acc = 0.0f;
  const uint32_t whole = n / R;
  for (uint32_t r0 = 0; r0 < whole; r0 += kGroup) {
    const uint32_t k = std::min(kGroup, whole - r0);
    if (k < kMinGroup_) {
      for (uint32_t j = 0; j < k; ++j) {
        const float r = tree_repeat_f32(p + (r0 + j) * R);
        acc = r0 + j == 0 ? r : fadd(acc, r);
      }
      continue;
    }
    pair_level_f32(a, p + r0 * R, k * R / 2);  // 64 -> 32 lanes a repeat
    pair_level_f32(b, a, k * R / 4);           // 16
    pair_level_f32(a, b, k * R / 8);           // 8
    pair_level_f32(b, a, k * R / 16);          // 4
    pair_level_f32(a, b, k * R / 32);          // 2
    pair_level_f32(b, a, k);                   // 1: each repeat's sum
    for (uint32_t j = 0; j < k; ++j) acc = r0 + j == 0 ? b[j] : fadd(acc, b[j]);
  }
  if (n % R) {  // masked-off lanes contribute 0
    float pad[R] = {};
    std::memcpy(pad, p + whole * R, (n % R) * sizeof(float));
    acc = fadd(acc, tree_repeat_f32(pad));
  }
  return acc;
}

template <class T>
OPKIT_EMU_HOT float reduce_sum_loop(const T* p, uint32_t n) {
  constexpr uint32_t R = kRepeat / sizeof(T);
  if constexpr (std::is_same<T, float>::value) {
    // The grouping wins only with vectors wider than the tree's own 4 lanes and enough repeats to fill them: at 16
    // bytes (baseline, x86-64-v2, armv8-a) its passes through memory are no wider than tree_repeat_f32's in-register
    // tree (1.3-1.45x slower), and a repeat alone leaves its last levels on 1-2 lanes either way.
    if (sizeof(vsumf_) > sizeof(v4f_) && n >= kMinGroup_ * R) return reduce_sum_groups_f32(p, n);
    float acc = 0.0f;
    for (uint32_t base = 0; base < n; base += R) {
      float r;
      if (n - base >= R) {
        r = tree_repeat_f32(p + base);
      } else {  // masked-off lanes contribute 0
        float pad[R] = {};
        std::memcpy(pad, p + base, (n - base) * sizeof(float));
        r = tree_repeat_f32(pad);
      }
      acc = base == 0 ? r : fadd(acc, r);
    }
    return acc;
  }
  float acc = tree_repeat<T>(p, std::min(R, n));
  for (uint32_t base = R; base < n; base += R) acc = rnd<T>(fadd(acc, tree_repeat<T>(p + base, std::min(R, n - base))));
  return acc;
}

// The index of the max (min): the first NaN if there is one, else the index the sequential scan `if (p[i] > best)
// best = p[i]` ends on (first index wins ties). NaN: CANN documents it only for the reductions of later chips
// (asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Reg矢量计算/归约计算/Reduce.md:158, ReduceDataBlock.md:121,
// C-API asc_reduce_max.md:72: NaN written, the first NaN's index), not for A2's; the emulator applies that rule
// to A2's ReduceMax / WholeReduceMax / BlockReduceMax alike, consistent with its element-wise Max (a NaN operand
// gives NaN) -- not checked on a device. One pass over 4 vectors of the build's widest (vsumf_: 4, 8 or 16 floats at
// the baseline, x86-64-v3, v4, so a step of 16, 32 or 64; loaded whole for float; shorter rows: one vector or the
// scan) that keeps each lane's extreme and the first index it was reached at (a later equal value does not replace
// it), then the extreme over the lanes and, among the lanes holding it (== : -0 and +0 alike), the smallest index:
// the first index holding a value equal to the extreme, as the scan gives. A NaN seen on the way: a second scan for
// the first one. The two passes it replaces (extreme, then a scalar search for its first index) took ~23 % of a
// softmax's samples.
// Compares and selects only: the value is one of the inputs.
template <class T, bool IsMax>
OPKIT_EMU_HOT uint32_t reduce_arg_loop(const T* p, uint32_t n) {
  // U independent compare-select chains (one would wait on its own latency); element i + u * W + k is lane k of
  // vector u. The lane count is no part of the result: any lane layout gives the scan's index.
  constexpr int W = static_cast<int>(sizeof(vsumf_) / sizeof(float)), U = 4, S = U * W;
  const float first = to_f(p[0]);
  if (first != first) return 0;
  if (n < static_cast<uint32_t>(W)) {  // shorter than one vector: the scan itself (setting up lanes cost more)
    float best = first;
    uint32_t at = 0;
    for (uint32_t i = 1; i < n; ++i) {
      const float v = to_f(p[i]);
      if (v != v) return i;  // the first NaN: nothing before it was one
      if (IsMax ? v > best : v < best) best = v, at = i;
    }
    return at;
  }
  // Shorter than one step of U vectors: chain 0 alone (the others would only be set up and merged).
  const int chains = n < static_cast<uint32_t>(S) ? 1 : U;
  vsumf_ a[U];
  vsumi_ ix[U], nan = {};
  vsumi_ lane;
  for (int k = 0; k < W; ++k) lane[k] = k;
  for (int u = 0; u < chains; ++u) {
    for (int k = 0; k < W; ++k) a[u][k] = first;
    ix[u] = vsumi_{};
  }
  // One vector of W elements starting at i into chain u: each lane sees its elements in index order.
  auto step = [&](uint32_t i, int u) {
    vsumf_ x;
    if constexpr (std::is_same<T, float>::value) std::memcpy(&x, p + i, sizeof x);  // one load
    else for (int k = 0; k < W; ++k) x[k] = to_f(p[i + k]);
    const vsumi_ t = IsMax ? x > a[u] : x < a[u];  // a NaN lane compares false
    a[u] = t ? x : a[u];
    ix[u] = t ? lane + static_cast<int>(i) : ix[u];  // count is an int32_t: indices fit
    nan |= x != x;
  };
  uint32_t i = 0;
  for (; i + S <= n; i += S)
    for (int u = 0; u < U; ++u) step(i + u * W, u);
  for (; i + W <= n; i += W) step(i, 0);
  // The chains into chain 0, lane by lane: the extreme, and for equal values (-0 == +0) the smaller index.
  for (int u = 1; u < chains; ++u) {
    const vsumi_ t = (IsMax ? a[u] > a[0] : a[u] < a[0]) | ((a[u] == a[0]) & (ix[u] < ix[0]));
    a[0] = t ? a[u] : a[0];
    ix[0] = t ? ix[u] : ix[0];
  }
  float best = first;
  uint32_t at = 0;
  bool any_nan = false;
  for (int k = 0; k < W; ++k) {  // any order: the value is the extreme, the index the smallest reaching it
    any_nan |= nan[k] != 0;
    const float v = a[0][k];
    const uint32_t j = static_cast<uint32_t>(ix[0][k]);
    if (IsMax ? v > best : v < best) best = v, at = j;
    else if (v == best && j < at) at = j;
  }
  for (; i < n; ++i) {  // the tail comes after every lane's index: only a strictly better value moves it
    const float v = to_f(p[i]);
    any_nan |= v != v;
    if (IsMax ? v > best : v < best) best = v, at = i;
  }
  if (any_nan)
    for (i = 0; i < n; ++i)
      if (to_f(p[i]) != to_f(p[i])) return i;  // the first NaN
  return at;
}

// dst of a reduction needs only its result's alignment, not 32 bytes: sizeof(T), or 2 x sizeof(T) for a value
// followed by its index (归约计算/ReduceRepeat.md 表3, which ReduceSum/ReduceMax/ReduceMin.md refer to).
template <class T>
inline void reduce_dst_align(const AscendC::LocalTensor<T>& dst, uint32_t dst_elems, const char* call, SrcLoc loc) {
  const uint32_t a = static_cast<uint32_t>(dst_elems == 2 ? 2 * sizeof(T) : sizeof(T));
  if (dst.m_.ub_off() % a != 0)
    fail("ub-alignment", call, loc, strf("dst starts at UB offset %u, not %u-byte aligned (ReduceRepeat.md table 3)",
                                         dst.m_.ub_off(), a));
}

// A reduction's result depends on every source lane: one poisoned lane poisons it (Flow::All); it is an
// error only if the result is then used (copied to GM or read with GetValue).
template <class T>
void reduce_common(VecOp op, const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                   const AscendC::LocalTensor<T>& tmp, int32_t count, uint32_t dst_elems, SrcLoc loc) {
  (void)op;
  BlockCtx& c = ctx();
  tmp.m_.check_live(c, call, loc, "sharedTmpBuffer");
  reduce_dst_align(dst, dst_elems, call, loc);
  ApiCall(c, Pipe::V, call, loc).dst(dst, dst_elems, "dst", kUnaligned).src(src, count).commit(Flow::All);
}

}  // namespace opkit_emu

namespace AscendC {

template <class T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count, OPKIT_LOC) {
  using namespace opkit_emu;
  OPKIT_EMU_CHECK_T(is_reduce_t, "ReduceSum", T);
  if (!vec_prologue<T>(VecOp::ReduceSum, "ReduceSum", count, loc)) return;
  reduce_common(VecOp::ReduceSum, "ReduceSum", dst, src, sharedTmpBuffer, count, 1, loc);
  dst.data()[0] = from_f<T>(reduce_sum_loop<T>(src.data(), static_cast<uint32_t>(count)));
  uint64_t bits = 0;
  std::memcpy(&bits, &dst.data()[0], sizeof(T));
  ctx().acc_val = bits;
}

namespace detail {
template <class T, bool IsMax>
void reduce_arg(opkit_emu::VecOp op, const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                const LocalTensor<T>& tmp, int32_t count, bool calIndex, opkit_emu::SrcLoc loc) {
  using namespace opkit_emu;
  if (!vec_prologue<T>(op, call, count, loc)) return;
  reduce_common(op, call, dst, src, tmp, count, calIndex ? 2 : 1, loc);
  if (sizeof(T) == 2 && calIndex && count > 65536)
    fail("tensor-bounds", call, loc, strf("count %d: a half index cannot exceed 65535", count));
  uint32_t i = reduce_arg_loop<T, IsMax>(src.data(), static_cast<uint32_t>(count));
  dst.data()[0] = src.data()[i];
  uint32_t vbits = 0;
  std::memcpy(&vbits, &src.data()[i], sizeof(T));
  ctx().max_min_cnt = uint64_t(i) << 32 | vbits;
  if (calIndex) {
    if constexpr (sizeof(T) == 4) { uint32_t b = i; std::memcpy(&dst.data()[1], &b, 4); }
    else { uint16_t b = static_cast<uint16_t>(i); std::memcpy(&dst.data()[1], &b, 2); }
  }
}
}  // namespace detail

template <class T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count, bool calIndex = false, OPKIT_LOC) {
  using namespace opkit_emu;
  OPKIT_EMU_CHECK_T(is_reduce_t, "ReduceMax", T);
  detail::reduce_arg<T, true>(VecOp::ReduceMax, "ReduceMax", dst, src, sharedTmpBuffer, count, calIndex, loc);
}
template <class T>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count, bool calIndex = false, OPKIT_LOC) {
  using namespace opkit_emu;
  OPKIT_EMU_CHECK_T(is_reduce_t, "ReduceMin", T);
  detail::reduce_arg<T, false>(VecOp::ReduceMin, "ReduceMin", dst, src, sharedTmpBuffer, count, calIndex, loc);
}

// The result registers of the count-form reductions (asc-devkit 82b89a15
// include/basic_api/kernel_operator_vec_reduce_intf.h:186-205; impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h
// :963-995; pages 归约计算辅助配置接口/GetReduceRepeatSumSpr(ISASI).md, GetReduceRepeatMaxMinSpr(ISASI).md): the sum
// of the last ReduceSum; the value and index of the last ReduceMax / ReduceMin (the index in T's bit pattern, as
// CANN reinterprets it). Per block, as the register is per core. GetAccVal / GetReduceMaxMinCount are CANN's
// deprecated names; the value-only GetReduceMaxMinCount is "not supported" on A2 (dav_c220 impl:957-961, 984-987).
template <class T>
T GetReduceRepeatSumSpr() {
  static_assert(opkit_emu::is_reduce_t<T>, "opkit emulator: GetReduceRepeatSumSpr supports half and float");
  T v;
  uint64_t bits = opkit_emu::ctx().acc_val;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
template <class T>
T GetAccVal() {
  return GetReduceRepeatSumSpr<T>();
}
// the untyped form: the register's 64 bits (kernel_operator_vec_reduce_intf_impl.h:1551-1566)
inline int64_t GetReduceRepeatSumSpr() { return static_cast<int64_t>(opkit_emu::ctx().acc_val); }
inline int64_t GetAccVal() { return GetReduceRepeatSumSpr(); }
template <class T>
void GetReduceRepeatMaxMinSpr(T& maxMinValue, T& maxMinIndex) {
  static_assert(opkit_emu::is_reduce_t<T>, "opkit emulator: GetReduceRepeatMaxMinSpr supports half and float");
  const uint64_t r = opkit_emu::ctx().max_min_cnt;
  const uint32_t v = static_cast<uint32_t>(r), i = static_cast<uint32_t>(r >> 32);
  std::memcpy(&maxMinValue, &v, sizeof(T));
  std::memcpy(&maxMinIndex, &i, sizeof(T));
}
template <class T>
void GetReduceMaxMinCount(T& maxMinValue, T& maxMinIndex) {
  GetReduceRepeatMaxMinSpr<T>(maxMinValue, maxMinIndex);
}
template <class T>
void GetReduceRepeatMaxMinSpr(T&) {
  static_assert(opkit_emu::reduce_spr_false<T>,
                "not supported on the emulator: GetReduceRepeatMaxMinSpr(value) without the index (CANN: not "
                "supported on this chip)");
}
template <class T>
void GetReduceMaxMinCount(T&) {
  static_assert(opkit_emu::reduce_spr_false<T>,
                "not supported on the emulator: GetReduceMaxMinCount(value) without the index (CANN: not supported on "
                "this chip)");
}

}  // namespace AscendC
