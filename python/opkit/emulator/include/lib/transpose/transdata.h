// CANN's lib/transpose/transdata.h (asc-devkit 82b89a15 include/adv_api/transpose/transdata.h:22-40,
// transdata_common.h: TransDataParams, TransDataConfig; page docs/zh/api/SIMD-API/高阶API/张量变换/TransData.md):
//   template <const TransDataConfig& config, typename T, typename U, typename S>
//   TransData(dst, src, LocalTensor<uint8_t> sharedTmpBuffer, const TransDataParams<U, S>& {srcLayout, dstLayout})
// for 2-byte T (half / bfloat16_t / uint16_t / int16_t), the four conversions of the A2 code
// (impl/adv_api/detail/transpose/transdata/transdata_impl.h:54-480), with the UB layouts that code uses:
//   NCDHW      [n][c][d][padHw], each (n, c, d) row of h x w elements padded to padHw = h x w rounded up to 16
//   NDC1HWC0   [n][d][c1][h x w][c0]      FRACTAL_Z_3D   [d][c1][h x w][n1][n0][c0]     (c0 = n0 = 16)
// NCDHW -> NDC1HWC0 / FRACTAL_Z_3D fill the lanes of c (and n) beyond the shape with 0 (the code's zeroed source);
// FRACTAL_Z_3D -> NCDHW writes each row's pad lanes [h x w, padHw) as 0 (the code zeroes its whole work buffer first,
// transdata_impl.h:72-82, then transposes it, zero rows included); NDC1HWC0 -> NCDHW writes them from a scratch it
// never fills there (:445-457): their value is not defined, so they are poison here. The shapes come from the layouts (MakeLayout(MakeShape(...), ...)):
// NCDHW [n, c, d, h, w], NDC1HWC0 [n, d, c1, h, w, c0], FRACTAL_Z_3D [d, c1, h, w, n1, n0, c0]; they must agree as
// CANN's host checks them (impl/adv_api/tiling/transpose/transdata_tiling.cpp:40-150: c0 = n0 = 16, c1 x 16 = c
// rounded up, ...), and the tensors hold them (api-argument); a sharedTmpBuffer below GetTransDataMaxMinTmpSize's
// size (:150-175) is tensor-bounds. Other format pairs are a compile error, as CANN's static_asserts make them.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it

namespace AscendC {
// The layout names TransData's parameters are built from (include/tensor_api/tensor/layout.h:40-60): a shape and a
// stride, each a tuple. Only what TransData reads is here: GetShape / GetStride.
template <typename ShapeT, typename StrideT>
struct Layout {
  constexpr Layout(const ShapeT& s, const StrideT& t) : shape_(s), stride_(t) {}
  constexpr const ShapeT& GetShape() const { return shape_; }
  constexpr const StrideT& GetStride() const { return stride_; }
  ShapeT shape_;
  StrideT stride_;
};
template <typename... Ts>
constexpr auto MakeShape(const Ts&... v) { return Std::tuple<Ts...>(v...); }
template <typename... Ts>
constexpr auto MakeStride(const Ts&... v) { return Std::tuple<Ts...>(v...); }
template <typename T, typename U>
constexpr auto MakeLayout(const T& shape, const U& stride) { return Layout<T, U>(shape, stride); }
template <typename T>
constexpr auto MakeLayout(const T& shape) { return Layout<T, Std::tuple<>>(shape, Std::tuple<>()); }
template <typename T> struct is_layout : Std::false_type {};
template <typename S, typename T> struct is_layout<Layout<S, T>> : Std::true_type {};
template <typename T> inline constexpr bool is_layout_v = is_layout<Std::remove_cvref_t<T>>::value;

template <typename T, typename U>
struct TransDataParams {
  T srcLayout;
  U dstLayout;
};
#ifndef ASCC_PARAM_TRANSDATACONFIG
#define ASCC_PARAM_TRANSDATACONFIG
struct TransDataConfig {
  DataFormat srcFormat;
  DataFormat dstFormat;
};
#endif
}  // namespace AscendC

namespace opkit_emu {
struct TransDataDims { int32_t n, c, d, h, w, c1, n1, hw, padHw; };

inline int64_t transdata_tmp_bytes(AscendC::DataFormat s, AscendC::DataFormat t, const TransDataDims& p) {
  using DF = AscendC::DataFormat;
  const int64_t c0 = 16, n0 = 16, sz = 2, d = p.d, c1 = p.c1, n1 = p.n1, pad = p.padHw;
  if (s == DF::NCDHW && t == DF::NDC1HWC0) return d * pad * sz + d * c1 * c0 * pad * sz;
  if (s == DF::NDC1HWC0 && t == DF::NCDHW) return d * c1 * c0 * pad * sz + 512;
  if (s == DF::NCDHW && t == DF::FRACTAL_Z_3D)
    return std::max<int64_t>(int64_t(p.c) * d * pad * sz, d * p.hw * n1 * n0 * sz) + n1 * n0 * d * c1 * c0 * pad * sz;
  const bool whole = p.n == n1 * n0 && p.c == c1 * c0;
  return n1 * n0 * c1 * c0 * d * pad * sz * (whole ? 1 : 2);
}

template <const AscendC::TransDataConfig& config, class T, class U, class S>
void adv_transdata(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                   const AscendC::LocalTensor<uint8_t>& tmp, const AscendC::TransDataParams<U, S>& prm, SrcLoc loc) {
  using DF = AscendC::DataFormat;
  static_assert(sizeof(T) == 2, "opkit emulator: TransData supports half / bfloat16_t / uint16_t / int16_t "
                                "(TransData.md)");
  static_assert(AscendC::is_layout_v<U> && AscendC::is_layout_v<S>, "TransData: srcLayout / dstLayout must be layouts");
  constexpr DF sf = config.srcFormat, df = config.dstFormat;
  constexpr bool toNcdhw = df == DF::NCDHW;
  static_assert((sf == DF::NCDHW && (df == DF::NDC1HWC0 || df == DF::FRACTAL_Z_3D)) ||
                    (df == DF::NCDHW && (sf == DF::NDC1HWC0 || sf == DF::FRACTAL_Z_3D)),
                "TransData supports (NCDHW, FRACTAL_Z_3D), (FRACTAL_Z_3D, NCDHW), (NCDHW, NDC1HWC0), (NDC1HWC0, NCDHW)");
  constexpr DF other = toNcdhw ? sf : df;
  const auto& ncdhw = [&]() -> const auto& {
    if constexpr (toNcdhw) return prm.dstLayout.GetShape(); else return prm.srcLayout.GetShape();
  }();
  const auto& os = [&]() -> const auto& {
    if constexpr (toNcdhw) return prm.srcLayout.GetShape(); else return prm.dstLayout.GetShape();
  }();
  using NT = AscendC::Std::remove_cvref_t<decltype(ncdhw)>;
  using OT = AscendC::Std::remove_cvref_t<decltype(os)>;
  static_assert(AscendC::Std::tuple_size<NT>::value == 5, "TransData: the NCDHW layout's shape must have 5 dims");
  static_assert(AscendC::Std::tuple_size<OT>::value == (other == DF::NDC1HWC0 ? 6 : 7),
                "TransData: the NDC1HWC0 shape has 6 dims, FRACTAL_Z_3D's 7");
  const char* api = "TransData";
  TransDataDims p;
  p.n = int32_t(AscendC::Std::get<0>(ncdhw)), p.c = int32_t(AscendC::Std::get<1>(ncdhw)), p.d = int32_t(AscendC::Std::get<2>(ncdhw));
  p.h = int32_t(AscendC::Std::get<3>(ncdhw)), p.w = int32_t(AscendC::Std::get<4>(ncdhw));
  p.c1 = (p.c + 15) / 16, p.n1 = (p.n + 15) / 16, p.hw = p.h * p.w, p.padHw = (p.hw + 15) / 16 * 16;
  bool agree = p.n > 0 && p.c > 0 && p.d > 0 && p.h > 0 && p.w > 0;
  if constexpr (other == DF::NDC1HWC0)  // [n, d, c1, h, w, c0]
    agree = agree && int32_t(AscendC::Std::get<0>(os)) == p.n && int32_t(AscendC::Std::get<1>(os)) == p.d &&
            int32_t(AscendC::Std::get<2>(os)) == p.c1 && int32_t(AscendC::Std::get<3>(os)) == p.h && int32_t(AscendC::Std::get<4>(os)) == p.w &&
            int32_t(AscendC::Std::get<5>(os)) == 16;
  else  // [d, c1, h, w, n1, n0, c0]
    agree = agree && int32_t(AscendC::Std::get<0>(os)) == p.d && int32_t(AscendC::Std::get<1>(os)) == p.c1 &&
            int32_t(AscendC::Std::get<2>(os)) == p.h && int32_t(AscendC::Std::get<3>(os)) == p.w && int32_t(AscendC::Std::get<4>(os)) == p.n1 &&
            int32_t(AscendC::Std::get<5>(os)) == 16 && int32_t(AscendC::Std::get<6>(os)) == 16;
  if (!agree)
    fail("api-argument", api, loc,
         strf("the layouts' shapes disagree: NCDHW [%d, %d, %d, %d, %d] needs %s (c0 = n0 = 16, c1 = ceil(c / 16), "
              "n1 = ceil(n / 16); transdata_tiling.cpp:40-150)", p.n, p.c, p.d, p.h, p.w,
              other == DF::NDC1HWC0 ? "NDC1HWC0 [n, d, c1, h, w, 16]" : "FRACTAL_Z_3D [d, c1, h, w, n1, 16, 16]"));
  const uint64_t nNcdhw = uint64_t(p.n) * p.c * p.d * p.padHw;
  const uint64_t nOther = other == DF::NDC1HWC0 ? uint64_t(p.n) * p.d * p.c1 * p.hw * 16
                                                : uint64_t(p.d) * p.c1 * p.hw * p.n1 * 256;
  const uint64_t nSrc = toNcdhw ? nOther : nNcdhw, nDst = toNcdhw ? nNcdhw : nOther;
  if (src.GetSize() < nSrc || dst.GetSize() < nDst)
    fail("api-argument", api, loc,
         strf("the layouts need %llu source and %llu destination elements (NCDHW rows padded to %d), but srcTensor "
              "holds %u and dstTensor %u", static_cast<unsigned long long>(nSrc),
              static_cast<unsigned long long>(nDst), p.padHw, src.GetSize(), dst.GetSize()));
  const int64_t need = transdata_tmp_bytes(sf, df, p);
  if (int64_t(tmp.GetSize()) < need)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %lld GetTransDataMaxMinTmpSize gives", tmp.GetSize(),
              static_cast<long long>(need)));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, nDst, "dstTensor").src(src, nSrc, "srcTensor").dst(tmp, tmp.GetSize(), "sharedTmpBuffer");
  const bool checked = c.commit(Flow::Manual);
  // index of (n, c, d, hw) in each layout; -1: a lane outside the shape
  auto ncdhw_at = [&](int64_t nn, int64_t ch, int64_t dd, int64_t hw) {
    return ((nn * p.c + ch) * p.d + dd) * p.padHw + hw;
  };
  auto other_at = [&](int64_t nn, int64_t ch, int64_t dd, int64_t hw) {
    if constexpr (other == DF::NDC1HWC0) return (((nn * p.d + dd) * p.c1 + ch / 16) * p.hw + hw) * 16 + ch % 16;
    else return (((dd * p.c1 + ch / 16) * p.hw + hw) * p.n1 * 16 + nn) * 16 + ch % 16;
  };
  std::vector<T> out(nDst);
  // to NCDHW from NDC1HWC0: only the lanes written below are defined; from FRACTAL_Z_3D the pad lanes are 0 too
  std::vector<uint8_t> ok(nDst, toNcdhw && other == DF::NDC1HWC0 ? 0 : 1);
  const int64_t nAll = other == DF::FRACTAL_Z_3D ? int64_t(p.n1) * 16 : p.n, cAll = int64_t(p.c1) * 16;
  std::memset(static_cast<void*>(out.data()), 0, nDst * sizeof(T));
  for (int64_t nn = 0; nn < nAll; ++nn)
    for (int64_t ch = 0; ch < cAll; ++ch)
      for (int64_t dd = 0; dd < p.d; ++dd)
        for (int64_t hw = 0; hw < p.hw; ++hw) {
          const bool in = nn < p.n && ch < p.c;
          if (toNcdhw) {
            if (!in) continue;
            const int64_t s = other_at(nn, ch, dd, hw), t = ncdhw_at(nn, ch, dd, hw);
            out[t] = src.data()[s];
            ok[t] = !(checked && ApiCall::lane_poisoned(c.operand(1), uint64_t(s)));
          } else {
            const int64_t t = other_at(nn, ch, dd, hw);
            if (!in) continue;  // stays 0, as the code's zeroed source gives
            const int64_t s = ncdhw_at(nn, ch, dd, hw);
            out[t] = src.data()[s];
            ok[t] = !(checked && ApiCall::lane_poisoned(c.operand(1), uint64_t(s)));
          }
        }
  for (uint64_t i = 0; i < nDst; ++i)
    if (ok[i] || !toNcdhw || other == DF::FRACTAL_Z_3D) dst.data()[i] = out[i];
  ctx().stats.vector_elems += nDst;
  shadow_fill(tmp.m_.ub_off(), tmp.m_.bytes, true);
  for (uint64_t i = 0; i < nDst; ++i) shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(i * 2), 2, ok[i] != 0);
}
}  // namespace opkit_emu

namespace AscendC {
template <const TransDataConfig& config, typename T, typename U, typename S>
void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const TransDataParams<U, S>& params, OPKIT_LOC) {
  ::opkit_emu::adv_transdata<config>(dstTensor, srcTensor, sharedTmpBuffer, params, loc);
}
}  // namespace AscendC
