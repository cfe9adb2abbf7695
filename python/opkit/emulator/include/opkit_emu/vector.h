// Level-2 (count form) vector instructions: exactly `count` elements, operand starts 32-byte aligned,
// count 0 is a no-op (facts sheet §3). Each op computes in float and rounds to the operand type.
#pragma once
#include "opkit_emu/host_math.h"

#include "opkit_emu/api_call.h"
#include "opkit_emu/host_expf.h"
#include "opkit_emu/nan_rule.h"

namespace opkit_emu {

// ---- dtype tables (A2, facts sheet §3 table); bf16 arithmetic only in the naive-AMP build ----
template <class T> inline constexpr bool bf16_math_ok = !is_bf16_v<T> || (kAllowBf16Math && !kIs310P);
template <class T> inline constexpr bool is_arith_t =  // Add Sub Mul Max Min Adds Muls Maxs Mins
    std::is_same<T, int16_t>::value || std::is_same<T, half>::value || std::is_same<T, int32_t>::value ||
    std::is_same<T, float>::value || (is_bf16_v<T> && kAllowBf16Math && !kIs310P);
template <class T> inline constexpr bool is_fmath_t =  // Div Exp Ln Sqrt Rsqrt Reciprocal Abs LeakyRelu
    std::is_same<T, half>::value || std::is_same<T, float>::value || (is_bf16_v<T> && kAllowBf16Math && !kIs310P);
template <class T> inline constexpr bool is_relu_t =
    std::is_same<T, half>::value || std::is_same<T, int32_t>::value || std::is_same<T, float>::value ||
    (is_bf16_v<T> && kAllowBf16Math && !kIs310P);
template <class T> inline constexpr bool is_dup_t =
    std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value || std::is_same<T, half>::value ||
    (is_bf16_v<T> && !kIs310P) || std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
    std::is_same<T, float>::value;

#define OPKIT_EMU_BF16_MSG(api)                                                                           \
  "opkit emulator: " api " has no bfloat16_t form on this chip (A2 has no bf16 vector arithmetic: Cast to " \
  "float first; the naive-AMP build defines OPKIT_EMU_ALLOW_BF16_MATH to model a bf16-computing kernel)"
#define OPKIT_EMU_CHECK_T(pred, api, T)                                          \
  static_assert(!is_bf16_v<T> || pred<T>, OPKIT_EMU_BF16_MSG(api));              \
  static_assert(is_bf16_v<T> || pred<T>, "opkit emulator: " api " does not support this element type on this chip")

// ---- per-call checks and counters ----
template <class T>
inline bool vec_prologue(VecOp op, const char* call, int64_t count, SrcLoc loc) {
  return vec_prologue<T>(ctx(), op, call, count, loc);
}
template <class T>
inline bool vec_prologue(BlockCtx& c, VecOp op, const char* call, int64_t count, SrcLoc loc) {
  if (count < 0) fail("tensor-bounds", call, loc, strf("count %lld is negative", (long long)count));
  BlockStats& s = c.stats;
  s.op_calls[static_cast<int>(op)]++;
  if (count == 0) return false;
  s.op_elems[static_cast<int>(op)] += count;
  s.vector_elems += count;
  s.vector_repeats += (static_cast<uint64_t>(count) * sizeof(T) + kRepeat - 1) / kRepeat;
  return true;
}

// Older helpers for headers not yet on the hook: each is its own vector-pipe access (hazards tracked);
// sources must be fully defined (strict, no poison flow).
template <class T>
inline void src_check(const AscendC::LocalTensor<T>& t, int64_t count, const char* call, SrcLoc loc, const char* name) {
  if (ApiCall(Pipe::V, call, loc).src(t, count, name).commit(Flow::Manual))
    t.m_.check_initialized(0, static_cast<uint64_t>(count) * sizeof(T), sizeof(T), call, loc, name);
}
template <class T>
inline void dst_check(const AscendC::LocalTensor<T>& t, int64_t count, const char* call, SrcLoc loc) {
  ApiCall(Pipe::V, call, loc).dst(t, count).commit(Flow::Manual);
}
template <class T>
inline void dst_done(const AscendC::LocalTensor<T>& t, int64_t count) {
  t.m_.mark_written(0, static_cast<uint64_t>(count) * sizeof(T));
}

// ---- element operations (applied to float for fp types, natively for integers) ----
// A NaN result is the emulator's NaN rule's (nan_rule.h), whatever operand order the compiler emitted.
struct OpAdd { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return fadd(a, b); } };
struct OpSub { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return fsub(a, b); } };
struct OpMul { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return fmul(a, b); } };
struct OpDiv { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return fdiv(a, b); } };
// Max/Min/Relu: a NaN operand gives NaN whichever side it is on. The A2 docs are silent on NaN; this is
// the conservative choice (NaN in the data reaches the output). `a != a` is false for integers.
struct OpMax { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return (a > b || a != a) ? a : b; } };
struct OpMin { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return (a < b || a != a) ? a : b; } };
struct OpExp { static OPKIT_EMU_INLINE float ap(float a) { return hm::exp(a); } };
struct OpLn { static OPKIT_EMU_INLINE float ap(float a) { return hm::log(a); } };
struct OpAbs { template <class F> static OPKIT_EMU_INLINE F ap(F a) { return a < F(0) ? -a : a; } };
struct OpSqrt { static OPKIT_EMU_INLINE float ap(float a) { return hm::sqrt(a); } };
struct OpRsqrt { static OPKIT_EMU_INLINE float ap(float a) { return 1.0f / hm::sqrt(a); } };
struct OpRecip { static OPKIT_EMU_INLINE float ap(float a) { return 1.0f / a; } };
struct OpRelu { template <class F> static OPKIT_EMU_INLINE F ap(F a) { return (a > F(0) || a != a) ? a : F(0); } };

// Integer adds wrap (two's complement) rather than overflow in C++ terms.
template <class T, class Op> OPKIT_EMU_INLINE T int_ap(T a, T b) {
  using W = std::conditional_t<sizeof(T) <= 4, int64_t, int64_t>;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(Op::ap(static_cast<W>(a), static_cast<W>(b))));
}

// Element loops. Operands either coincide exactly or do not overlap (the hardware rule, facts §3
// "Overlap"), so each loop comes in a restrict-qualified form per aliasing pattern: the vectoriser
// then needs no run-time alias checks (which fail, and fall back to scalar code, for in-place ops).
template <class Op, class T>
OPKIT_EMU_INLINE T bin_elem(T x, T y) {
  if constexpr (is_fp16_like<T>::value) return from_f<T>(Op::ap(to_f(x), to_f(y)));
  else if constexpr (std::is_integral<T>::value) return int_ap<T, Op>(x, y);
  else return Op::ap(x, y);
}
template <class Op, class T>
OPKIT_EMU_HOT void bin_loop_distinct(T* __restrict d, const T* __restrict a, const T* __restrict b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = bin_elem<Op, T>(a[i], b[i]);
}
template <class Op, class T>
OPKIT_EMU_HOT void bin_loop_dst_is_a(T* d, const T* __restrict b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = bin_elem<Op, T>(d[i], b[i]);
}
template <class Op, class T>
OPKIT_EMU_HOT void bin_loop_dst_is_b(T* d, const T* __restrict a, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = bin_elem<Op, T>(a[i], d[i]);
}
template <class Op, class T>
OPKIT_EMU_HOT void bin_loop_all_same(T* d, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = bin_elem<Op, T>(d[i], d[i]);
}
template <class Op, class T>
OPKIT_EMU_HOT void bin_loop_any(T* d, const T* a, const T* b, uint32_t n) {  // partial overlap
  for (uint32_t i = 0; i < n; ++i) d[i] = bin_elem<Op, T>(a[i], b[i]);
}
inline bool overlaps(const void* p, const void* q, size_t bytes) {
  auto x = static_cast<const uint8_t*>(p), y = static_cast<const uint8_t*>(q);
  return x < y + bytes && y < x + bytes;
}
template <class Op, class T>
inline void bin_loop(T* d, const T* a, const T* b, uint32_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  if (d == a && d == b) bin_loop_all_same<Op, T>(d, n);
  else if (d == a && !overlaps(d, b, bytes)) bin_loop_dst_is_a<Op, T>(d, b, n);
  else if (d == b && !overlaps(d, a, bytes)) bin_loop_dst_is_b<Op, T>(d, a, n);
  else if (!overlaps(d, a, bytes) && !overlaps(d, b, bytes)) bin_loop_distinct<Op, T>(d, a, b, n);
  else bin_loop_any<Op, T>(d, a, b, n);
}

template <class Op, class T>
OPKIT_EMU_INLINE T scalar_elem(T x, T s, float fs) {
  if constexpr (is_fp16_like<T>::value) return from_f<T>(Op::ap(to_f(x), fs));
  else if constexpr (std::is_integral<T>::value) return int_ap<T, Op>(x, s);
  else return Op::ap(x, s);
}
// The scalar forms test their scalar once: when it is not NaN, two NaNs cannot meet, and where the hardware gives
// the rule for one NaN operand and an invalid operation (x86, nan_rule.h) the loop runs the plain operation, with
// no blend per lane; the rule's loop only for a NaN scalar. The scalar is made opaque first: in a header-only
// build a literal scalar could otherwise be folded into the plain loop (x * -1 -> -x flips a NaN's sign).
template <class Op> struct PlainOf { using type = Op; };  // the operation without the rule's blend
struct OpAddPlain { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return a + b; } };
struct OpMulPlain { template <class F> static OPKIT_EMU_INLINE F ap(F a, F b) { return a * b; } };
template <> struct PlainOf<OpAdd> { using type = OpAddPlain; };
template <> struct PlainOf<OpMul> { using type = OpMulPlain; };
template <class Op, class T> inline constexpr bool kScalarPlain =
    kNanRuleByHardware && !std::is_integral<T>::value && !std::is_same<typename PlainOf<Op>::type, Op>::value;
OPKIT_EMU_INLINE float opaque_scalar(float x) {
#if defined(__x86_64__)
  __asm__("" : "+x"(x));
#elif defined(__i386__)
  __asm__("" : "+m"(x));
#endif
  return x;
}
template <class T> OPKIT_EMU_INLINE T scalar_as(T s, float fo) {  // float's scalar is fo; fp16 ones use fo
  if constexpr (std::is_same<T, float>::value) return fo;
  else return s;
}
#define OPKIT_EMU_SCALAR_LOOP(SRC)                                                                   \
  const float fs = to_f(s);                                                                          \
  if constexpr (kScalarPlain<Op, T>) {                                                               \
    if (fs == fs) {                                                                                  \
      using P = typename PlainOf<Op>::type;                                                          \
      const float fo = opaque_scalar(fs);                                                            \
      const T so = scalar_as<T>(s, fo);                                                              \
      for (uint32_t i = 0; i < n; ++i) d[i] = scalar_elem<P, T>(SRC, so, fo);                        \
      return;                                                                                        \
    }                                                                                                \
  }                                                                                                  \
  for (uint32_t i = 0; i < n; ++i) d[i] = scalar_elem<Op, T>(SRC, s, fs);
template <class Op, class T>
OPKIT_EMU_HOT void scalar_loop_distinct(T* __restrict d, const T* __restrict a, T s, uint32_t n) {
  OPKIT_EMU_SCALAR_LOOP(a[i])
}
template <class Op, class T>
OPKIT_EMU_HOT void scalar_loop_inplace(T* d, T s, uint32_t n) {
  OPKIT_EMU_SCALAR_LOOP(d[i])
}
template <class Op, class T>
OPKIT_EMU_HOT void scalar_loop_any(T* d, const T* a, T s, uint32_t n) {
  OPKIT_EMU_SCALAR_LOOP(a[i])
}
#undef OPKIT_EMU_SCALAR_LOOP
template <class Op, class T>
inline void scalar_loop(T* d, const T* a, T s, uint32_t n) {
  if (d == a) scalar_loop_inplace<Op, T>(d, s, n);
  else if (!overlaps(d, a, static_cast<size_t>(n) * sizeof(T))) scalar_loop_distinct<Op, T>(d, a, s, n);
  else scalar_loop_any<Op, T>(d, a, s, n);
}

template <class Op, class T>
OPKIT_EMU_INLINE T un_elem(T x) {
  if constexpr (std::is_integral<T>::value) return Op::ap(x);
  else return from_f<T>(Op::ap(to_f(x)));
}
template <class Op, class T>
OPKIT_EMU_HOT void un_loop_distinct(T* __restrict d, const T* __restrict a, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = un_elem<Op, T>(a[i]);
}
template <class Op, class T>
OPKIT_EMU_HOT void un_loop_inplace(T* d, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = un_elem<Op, T>(d[i]);
}
template <class Op, class T>
OPKIT_EMU_HOT void un_loop_any(T* d, const T* a, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = un_elem<Op, T>(a[i]);
}
// Exp: the host's expf 8 or 16 lanes at a time (host_expf.h: the widest loop the CPU has), bitwise what the element loop computes.
template <class T>
OPKIT_EMU_HOT void exp_loop_fp16(T* d, const T* a, uint32_t n) {  // through a float buffer, 256 at a time
  float buf[256];
  for (uint32_t i = 0; i < n; i += 256) {
    const uint32_t m = n - i < 256 ? n - i : 256;
    for (uint32_t k = 0; k < m; ++k) buf[k] = to_f(a[i + k]);
    host_expf::loop(buf, buf, m);
    for (uint32_t k = 0; k < m; ++k) d[i + k] = from_f<T>(buf[k]);
  }
}
template <class Op, class T>
inline void un_loop(T* d, const T* a, uint32_t n) {
  if constexpr (std::is_same<Op, OpExp>::value && std::is_same<T, float>::value) {
    if (d == a || !overlaps(d, a, static_cast<size_t>(n) * sizeof(T))) return host_expf::loop(d, a, n);
  } else if constexpr (std::is_same<Op, OpExp>::value && is_fp16_like<T>::value) {
    if (d == a || !overlaps(d, a, static_cast<size_t>(n) * sizeof(T))) return exp_loop_fp16<T>(d, a, n);
  }
  if (d == a) un_loop_inplace<Op, T>(d, n);
  else if (!overlaps(d, a, static_cast<size_t>(n) * sizeof(T))) un_loop_distinct<Op, T>(d, a, n);
  else un_loop_any<Op, T>(d, a, n);
}
template <class T>
OPKIT_EMU_HOT void leaky_loop(T* d, const T* a, float alpha, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    float x = to_f(a[i]);
    d[i] = from_f<T>(x >= 0.0f ? x : fmul(x, alpha));
  }
}
template <class T>
OPKIT_EMU_HOT void fill_loop(T* d, T v, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = v;
}

template <class Op, class T>
inline void binary(VecOp op, const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                   const AscendC::LocalTensor<T>& b, int64_t count, SrcLoc loc) {
  BlockCtx& c = ctx();
  if (!vec_prologue<T>(c, op, call, count, loc)) return;
  ApiCall(c, Pipe::V, call, loc).dst(dst, count).src(a, count, "src0").src(b, count, "src1").commit();
  bin_loop<Op, T>(dst.data(), a.data(), b.data(), static_cast<uint32_t>(count));
}
template <class Op, class T>
inline void with_scalar(VecOp op, const char* call, const AscendC::LocalTensor<T>& dst,
                        const AscendC::LocalTensor<T>& a, T s, int64_t count, SrcLoc loc) {
  BlockCtx& c = ctx();
  if (!vec_prologue<T>(c, op, call, count, loc)) return;
  ApiCall(c, Pipe::V, call, loc).dst(dst, count).src(a, count).commit();
  scalar_loop<Op, T>(dst.data(), a.data(), s, static_cast<uint32_t>(count));
}
template <class Op, class T>
inline void unary(VecOp op, const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                  int64_t count, SrcLoc loc) {
  BlockCtx& c = ctx();
  if (!vec_prologue<T>(c, op, call, count, loc)) return;
  ApiCall(c, Pipe::V, call, loc).dst(dst, count).src(a, count).commit();
  un_loop<Op, T>(dst.data(), a.data(), static_cast<uint32_t>(count));
}

template <class T> struct nondeduced { using type = T; };
template <class T> using nondeduced_t = typename nondeduced<T>::type;

}  // namespace opkit_emu

namespace AscendC {

#define OPKIT_EMU_BINARY(NAME, OP, PRED)                                                                     \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,              \
            const int32_t& count, OPKIT_LOC) {                                                               \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    binary<OP, T>(VecOp::NAME, #NAME, dst, src0, src1, count, loc);                                          \
  }                                                                                                          \
  template <class T, bool isSetMask = true, OPKIT_NOLOC>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,              \
            const int32_t& count, OPKIT_NOLOC_PARAM) {                                                       \
    NAME<T, isSetMask>(dst, src0, src1, count, OPKIT_PTR_LOC);                                               \
  }
OPKIT_EMU_BINARY(Add, OpAdd, is_arith_t)
OPKIT_EMU_BINARY(Sub, OpSub, is_arith_t)
OPKIT_EMU_BINARY(Mul, OpMul, is_arith_t)
OPKIT_EMU_BINARY(Max, OpMax, is_arith_t)
OPKIT_EMU_BINARY(Min, OpMin, is_arith_t)
OPKIT_EMU_BINARY(Div, OpDiv, is_fmath_t)
#undef OPKIT_EMU_BINARY

#define OPKIT_EMU_SCALAR(NAME, OP, PRED)                                                                     \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count, \
            OPKIT_LOC) {                                                                                     \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    with_scalar<OP, T>(VecOp::NAME, #NAME, dst, src, scalarValue, count, loc);                               \
  }                                                                                                          \
  template <class T, bool isSetMask = true, OPKIT_NOLOC>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count, \
            OPKIT_NOLOC_PARAM) {                                                                             \
    NAME<T, isSetMask>(dst, src, scalarValue, count, OPKIT_PTR_LOC);                                         \
  }
OPKIT_EMU_SCALAR(Adds, OpAdd, is_arith_t)
OPKIT_EMU_SCALAR(Muls, OpMul, is_arith_t)
OPKIT_EMU_SCALAR(Maxs, OpMax, is_arith_t)
OPKIT_EMU_SCALAR(Mins, OpMin, is_arith_t)
#undef OPKIT_EMU_SCALAR

#define OPKIT_EMU_UNARY(NAME, OP, PRED)                                                                      \
  template <class T, bool isSetMask = true>                                                                  \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, OPKIT_LOC) {        \
    using namespace opkit_emu;                                                                               \
    OPKIT_EMU_CHECK_T(PRED, #NAME, T);                                                                       \
    unary<OP, T>(VecOp::NAME, #NAME, dst, src, count, loc);                                                  \
  }                                                                                                          \
  template <class T, bool isSetMask = true, OPKIT_NOLOC>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, OPKIT_NOLOC_PARAM) { \
    NAME<T, isSetMask>(dst, src, count, OPKIT_PTR_LOC);                                                      \
  }
OPKIT_EMU_UNARY(Exp, OpExp, is_fmath_t)
OPKIT_EMU_UNARY(Ln, OpLn, is_fmath_t)
OPKIT_EMU_UNARY(Abs, OpAbs, is_fmath_t)
OPKIT_EMU_UNARY(Sqrt, OpSqrt, is_fmath_t)
OPKIT_EMU_UNARY(Rsqrt, OpRsqrt, is_fmath_t)
OPKIT_EMU_UNARY(Reciprocal, OpRecip, is_fmath_t)
OPKIT_EMU_UNARY(Relu, OpRelu, is_relu_t)
#undef OPKIT_EMU_UNARY

template <class T, bool isSetMask = true>
void LeakyRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count,
               OPKIT_LOC) {
  using namespace opkit_emu;
  OPKIT_EMU_CHECK_T(is_fmath_t, "LeakyRelu", T);
  if (!vec_prologue<T>(VecOp::LeakyRelu, "LeakyRelu", count, loc)) return;
  ApiCall(Pipe::V, "LeakyRelu", loc).dst(dst, count).src(src, count).commit();
  leaky_loop<T>(dst.data(), src.data(), to_f(scalarValue), static_cast<uint32_t>(count));
}

template <class T>
void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_dup_t<T>, "opkit emulator: Duplicate does not support this element type on this chip");
  if (!vec_prologue<T>(VecOp::Duplicate, "Duplicate", count, loc)) return;
  ApiCall(Pipe::V, "Duplicate", loc).dst(dst, count).commit();
  fill_loop<T>(dst.data(), scalarValue, static_cast<uint32_t>(count));
}

// ---- operator overloads: dst = a (+|-|*|/) b over dst.GetSize() elements -----------------------
template <class T>
struct TensorArg {  // converting to it records the expression's file:line
  const LocalTensor<T>& t;
  opkit_emu::SrcLoc loc;
  TensorArg(const LocalTensor<T>& x, opkit_emu::SrcLoc l = opkit_emu::SrcLoc::current()) : t(x), loc(l) {}
};
template <class T, int Kind>
struct BinaryExpr {
  LocalTensor<T> a, b;
  opkit_emu::SrcLoc loc;
  void opkit_emu_eval(const LocalTensor<T>& dst) const {
    const int32_t n = static_cast<int32_t>(dst.GetSize());
    if constexpr (Kind == 0) Add(dst, a, b, n, loc);
    else if constexpr (Kind == 1) Sub(dst, a, b, n, loc);
    else if constexpr (Kind == 2) Mul(dst, a, b, n, loc);
    else Div(dst, a, b, n, loc);
  }
};
template <class T>
BinaryExpr<T, 0> operator+(const LocalTensor<T>& a, opkit_emu::nondeduced_t<TensorArg<T>> b) { return {a, b.t, b.loc}; }
template <class T>
BinaryExpr<T, 1> operator-(const LocalTensor<T>& a, opkit_emu::nondeduced_t<TensorArg<T>> b) { return {a, b.t, b.loc}; }
template <class T>
BinaryExpr<T, 2> operator*(const LocalTensor<T>& a, opkit_emu::nondeduced_t<TensorArg<T>> b) { return {a, b.t, b.loc}; }
template <class T>
BinaryExpr<T, 3> operator/(const LocalTensor<T>& a, opkit_emu::nondeduced_t<TensorArg<T>> b) { return {a, b.t, b.loc}; }

}  // namespace AscendC
