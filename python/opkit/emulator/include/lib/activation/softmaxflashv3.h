// CANN's lib/activation/softmaxflashv3.h (asc-devkit 82b89a15 include/adv_api/activation/softmaxflashv3.h; page
// docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxFlashV3.md): the online softmax with a mean shift, A2 form
// half source / dst / expMax, float mean / expSum / max (the page's only types), with and without sharedTmpBuffer:
//   template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
//             bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
//   SoftmaxFlashV3(dst, mean, expSum, max, src, expMax, inMean, inExpSum, inMax[, sharedTmpBuffer], tiling, params)
// Per row in float, in the A2 code's order (impl/adv_api/detail/activation/softmax/membase/v220/
// softmax_flashv3_impl.h:29-347): x = float(src); the 64 partial sums b[e] = sum x[8e..8e+7] (first 512 columns,
// BlockReduceSum) plus x[512 + 64 i + e] for each further 64 columns; the 8 group means local[g] = (b[8g..8g+7]
// summed) x (1 / baseK), baseK = srcK / 8; rowMean = (sum of local) x (1 / 8); shift[g] = (rowMean - local[g]) x
// alpha / (1 - alpha), subtracted from the g-th baseK columns. No update: mean = rowMean, max = rowmax(x);
// update: mean = (inMean x (loopCnt - 1) + rowMean) x (1 / loopCnt), sc = (rowMean - mean) x s, sp = (inMean -
// mean) x s, max = max(rowmax(x) + sc, inMax + sp), expMax = exp(inMax - max + sp). Then dst = exp(x - (max -
// sc)) rounded to half, expSum = sum of those float exps (+ expMax x inExpSum with update). Outputs per lane of
// the row's 32-byte block, inputs read per lane; dst's column k uses lane k % 8 (as CANN's golden,
// examples/.../softmaxflashv3/scripts/gen_data.py); expMax holds lane 0 over 16 halves. Sums in the A2 code's order
// (block pair trees, then lane-wise adds): the mean bitwise; expSum as far as Exp matches the device's.
// Checked (SoftmaxFlashV3.md 约束说明): srcK >= 512 and a multiple of 64, srcM a multiple of 8, splitMeanCnt 8,
// oriSrcM / oriSrcK equal to srcM / srcK (CANN's debug check), tensors too small (api-argument); a
// sharedTmpBuffer below GetSoftMaxFlashV3MaxMinTmpSize's A2 minimum, (5 x 8 + 2 srcK + 64) x 4 bytes (impl/
// adv_api/tiling/activation/softmax_tiling.cpp:852-855), is tensor-bounds. Not: NZ format (a compile error).
// The tiling drives the rows as on A2: rangeM rounds of splitM rows, then tailM rows; rows it leaves out are not
// written (a zero tiling computes nothing). A tiling not of SoftMaxFlashV3TilingFunc's form for srcK, or covering more
// than srcM rows, is api-argument; a sharedTmpBuffer below what the tiling's rounds use is tensor-bounds.
// Poison: a row is poison in every output when one of its source lanes or its inMean / inExpSum / inMax is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_softmax.h"

namespace opkit_emu {
inline uint32_t softmax_flashv3_min_tmp(uint32_t k) { return (8 * 5 + 2 * k + 64) * 4; }

// BlockReduceSum's order for one 32-byte block of floats (opkit_emu/reduce_level0.h): an adjacent-pair tree.
inline float tree8(const float* v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }
// The 64 per-lane partials of a row of k >= 512 floats: block sums of the first 512, then each further 64 in order.
inline void block_partials(const float* x, uint32_t k, float* b) {
  for (uint32_t q = 0; q < 64; ++q) b[q] = tree8(x + 8 * q);
  for (uint32_t i = 0; i < k / 64 - 8; ++i)
    for (uint32_t q = 0; q < 64; ++q) b[q] = x[512 + 64 * i + q] + b[q];
}

template <bool update>
void adv_softmax_flashv3(const AscendC::LocalTensor<half>& dst, const AscendC::LocalTensor<float>& mean,
                         const AscendC::LocalTensor<float>& esum, const AscendC::LocalTensor<float>& max,
                         const AscendC::LocalTensor<half>& src, const AscendC::LocalTensor<half>& emax,
                         const AscendC::LocalTensor<float>& in_mean, const AscendC::LocalTensor<float>& in_sum,
                         const AscendC::LocalTensor<float>& in_max, const AscendC::LocalTensor<uint8_t>* tmp,
                         const AscendC::tiling::SoftMaxTiling& t, const AscendC::SoftMaxParams& p, SrcLoc loc) {
  const char* api = "SoftmaxFlashV3";
  const uint32_t M = p.srcM, K = p.srcK;
  if (K < 512 || K % 64 != 0 || M == 0 || M % 8 != 0)
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u]: SoftmaxFlashV3.md needs srcK >= 512 and a multiple of 64, srcM a non-zero "
              "multiple of 8", M, K));
  if (p.splitMeanCnt != 8)
    fail("api-argument", api, loc, strf("splitMeanCnt %u: SoftmaxFlashV3.md supports only 8", p.splitMeanCnt));
  // CANN's CPU-debug check (api_check/kernel_check/activation/softmax/softmax_flashv3/softmax_flashv3_check_common.h
  // :95-104) and the page's 参数说明: the original shape equals [srcM, srcK] (oriSrcK 0 made baseK 0 on A2).
  if (p.oriSrcM != M || p.oriSrcK != K)
    fail("api-argument", api, loc,
         strf("params.oriSrcM %u / oriSrcK %u differ from srcM %u / srcK %u: SoftmaxFlashV3 needs them equal (CANN's "
              "softmax_flashv3_check_common.h)", p.oriSrcM, p.oriSrcK, M, K));
  if (update && p.loopCnt == 0) fail("api-argument", api, loc, "loopCnt 0 with isUpdate (the mean divides by it)");
  const uint64_t n = uint64_t(M) * K, nu = uint64_t(M) * 8, nt = uint64_t(M) * 16;
  if (src.GetSize() < n || dst.GetSize() < n || mean.GetSize() < nu || esum.GetSize() < nu || max.GetSize() < nu ||
      (update && (emax.GetSize() < nt || in_mean.GetSize() < nu || in_sum.GetSize() < nu || in_max.GetSize() < nu)))
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but src holds %u, dst %u (need %llu), mean %u, expSum %u, max %u (need "
              "%llu)%s", M, K, src.GetSize(), dst.GetSize(), static_cast<unsigned long long>(n), mean.GetSize(),
              esum.GetSize(), max.GetSize(), static_cast<unsigned long long>(nu),
              update ? "; with isUpdate expMax needs 16 halves a row, inMean / inExpSum / inMax 8 floats" : ""));
  // The A2 code walks the rows as the tiling says (v220/softmax_flashv3_impl.h:198-221, 315-330): rangeM rounds of
  // splitM rows at offsets splitSize / reduceSize, then tailM rows; rows the tiling leaves out are not computed.
  const uint64_t rows = uint64_t(t.rangeM) * t.splitM + t.tailM;
  if (rows) {
    if (t.splitK != K || t.reduceK != 8 || t.splitSize != t.splitM * K || t.reduceSize != t.splitM * 8 ||
        t.tailSplitSize != t.tailM * K || t.tailReduceSize != t.tailM * 8 || t.tailM > t.splitM)
      fail("api-argument", api, loc,
           strf("tiling {splitM %u, splitK %u, splitSize %u, reduceK %u, reduceSize %u, rangeM %u, tailM %u, "
                "tailSplitSize %u, tailReduceSize %u} is not one SoftMaxFlashV3TilingFunc makes for srcK %u (splitK = "
                "srcK, reduceK = 8, the sizes splitM / tailM times those, tailM <= splitM)",
                t.splitM, t.splitK, t.splitSize, t.reduceK, t.reduceSize, t.rangeM, t.tailM, t.tailSplitSize,
                t.tailReduceSize, K));
    if (rows > M)
      fail("api-argument", api, loc,
           strf("tiling covers %llu rows (rangeM %u x splitM %u + tailM %u), params.srcM is %u",
                static_cast<unsigned long long>(rows), t.rangeM, t.splitM, t.tailM, M));
  }
  if (tmp && tmp->GetSize() < softmax_flashv3_min_tmp(K))
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetSoftMaxFlashV3MaxMinTmpSize gives as the minimum "
              "for srcK %u", tmp->GetSize(), softmax_flashv3_min_tmp(K), K));
  // The work buffer's layout (:148-154, 244-250): splitSize + splitM x 64 + reduceSize x (3, 4 with isUpdate)
  // floats, then srcK floats for the broadcast shifts; the tail round keeps those offsets.
  const uint64_t layout =
      rows ? (uint64_t(t.splitSize) + t.splitM * 64ull + t.reduceSize * (update ? 4ull : 3ull) + K) * 4 : 0;
  if (tmp && tmp->GetSize() < layout)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes; the tiling's %u rows a round need %llu (splitSize + splitM x 64 + "
              "reduceSize x %d + srcK floats, CANN's A2 layout)", tmp->GetSize(), t.splitM,
              static_cast<unsigned long long>(layout), update ? 4 : 3));
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "srcTensor").dst(dst, n, "dstTensor").dst(mean, nu, "meanTensor").dst(esum, nu, "expSumTensor");
  c.dst(max, nu, "maxTensor");
  if (update) {
    c.src(in_mean, nu, "inMeanTensor").src(in_sum, nu, "inExpSumTensor").src(in_max, nu, "inMaxTensor");
    c.dst(emax, nt, "expMaxTensor");
  }
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be src) is written
    bad.assign(M, 0);
    for (uint32_t r = 0; r < M; ++r) {
      for (uint32_t k = 0; k < K && !bad[r]; ++k) bad[r] = ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * K + k);
      for (uint32_t j = 0; update && j < 8 && !bad[r]; ++j)
        for (int o = 5; o <= 7; ++o) bad[r] = bad[r] || ApiCall::lane_poisoned(c.operand(o), uint64_t(r) * 8 + j);
    }
  }
  ctx().stats.vector_elems += n;
  const float s = p.alpha / (1.0f - p.alpha);
  const uint32_t baseK = K / 8;
  std::vector<float> x(K), e(K);
  std::vector<half> out(n);
  std::vector<float> o_mean(nu), o_sum(nu), o_max(nu), o_em(nu);
  for (uint32_t r = 0; r < rows; ++r) {
    const half* xs = src.data() + uint64_t(r) * K;
    for (uint32_t k = 0; k < K; ++k) x[k] = to_f(xs[k]);
    // CANN's A2 order (v220/softmax_flashv3_impl.h:29-83; the sum's BigBlockReduceSum, softmax_common_reduce.h
    // :95-113): BlockReduceSum's adjacent-pair tree over each 8-float block of the first 512 columns, each further
    // 64 columns added lane by lane in order, then pair trees of 8 (the 64 -> 8 group sums, the 8 -> 1 mean).
    float b[64];
    block_partials(x.data(), K, b);
    float local[8];
    for (uint32_t g = 0; g < 8; ++g) local[g] = tree8(b + 8 * g) * (1.0f / baseK);
    const float total = tree8(local);
    const float row_mean = total * (1.0f / 8);
    for (uint32_t g = 0; g < 8; ++g) {
      const float sh = (row_mean - local[g]) * s;
      for (uint32_t i = 0; i < baseK; ++i) x[g * baseK + i] -= sh;
    }
    float mx = x[0];
    for (uint32_t k = 1; k < K; ++k) mx = OpMax::ap(mx, x[k]);  // a NaN anywhere gives NaN (OpMax)
    float sub[8];
    for (uint32_t j = 0; j < 8; ++j) {
      const uint64_t at = uint64_t(r) * 8 + j;
      float m, sc, mxj, em = 0.0f;
      if (update) {
        const float im = in_mean.data()[at];
        m = (im * (p.loopCnt - 1.0f) + row_mean) * (1.0f / p.loopCnt);
        sc = (row_mean - m) * s;
        const float sp = (im - m) * s;
        mxj = OpMax::ap(mx + sc, in_max.data()[at] + sp);
        em = hm::exp(in_max.data()[at] - mxj + sp);
      } else {
        m = row_mean;
        sc = (row_mean - m) * s;
        mxj = mx + sc;
      }
      o_mean[at] = m, o_max[at] = mxj, o_em[at] = em;
      sub[j] = mxj - sc;
    }
    for (uint32_t k = 0; k < K; ++k)
      e[k] = hm::exp(x[k] - sub[k % 8]), out[uint64_t(r) * K + k] = softmax_out<half>(e[k]);
    // NewReduceSumLastNDImpl (v220/softmax_common_impl/softmax_common_nd_reduce.h:297-330): BigBlockReduceSum's 64
    // partials, then BlockReduceSum 64 -> 8 -> 1 (splitM > 1) or WholeReduceSum (one row): the same pair tree.
    block_partials(e.data(), K, b);
    float g8[8];
    for (uint32_t g = 0; g < 8; ++g) g8[g] = tree8(b + 8 * g);
    const float sm = tree8(g8);
    for (uint32_t j = 0; j < 8; ++j) {
      const uint64_t at = uint64_t(r) * 8 + j;
      o_sum[at] = update ? o_em[at] * in_sum.data()[at] + sm : sm;
    }
  }
  for (uint64_t i = 0; i < rows * K; ++i) dst.data()[i] = out[i];
  for (uint64_t i = 0; i < rows * 8; ++i)
    mean.data()[i] = o_mean[i], esum.data()[i] = o_sum[i], max.data()[i] = o_max[i];
  if (update)
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t k = 0; k < 16; ++k) emax.data()[uint64_t(r) * 16 + k] = softmax_out<half>(o_em[uint64_t(r) * 8]);
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t r = 0; r < rows; ++r) {
    const bool ok = bad.empty() || !bad[r];
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * 2), K * 2, ok);
    shadow_fill(mean.m_.ub_off() + r * kBlk, kBlk, ok);
    shadow_fill(esum.m_.ub_off() + r * kBlk, kBlk, ok);
    shadow_fill(max.m_.ub_off() + r * kBlk, kBlk, ok);
    if (update) shadow_fill(emax.m_.ub_off() + r * kBlk, kBlk, ok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_FLASHV3_TPL                                                                                 \
  template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false, \
            bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define OPKIT_EMU_FLASHV3_CHECK                                                                               \
  static_assert(std::is_same<T, half>::value && std::is_same<U, float>::value,                               \
                "SoftmaxFlashV3 takes T = half, U = float (SoftmaxFlashV3.md)");                              \
  static_assert(!isDataFormatNZ, "not supported on the emulator: SoftmaxFlashV3 with isDataFormatNZ")
OPKIT_EMU_FLASHV3_TPL
void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor, const LocalTensor<U>& expSumTensor,
                    const LocalTensor<U>& maxTensor, const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                    const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                    const LocalTensor<U>& inMaxTensor, const SoftMaxTiling& tiling, const SoftMaxParams& params,
                    OPKIT_LOC) {
  OPKIT_EMU_FLASHV3_CHECK;
  ::opkit_emu::adv_softmax_flashv3<isUpdate>(dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor,
                                             inMeanTensor, inExpSumTensor, inMaxTensor, nullptr, tiling, params, loc);
}
OPKIT_EMU_FLASHV3_TPL
void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor, const LocalTensor<U>& expSumTensor,
                    const LocalTensor<U>& maxTensor, const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                    const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                    const LocalTensor<U>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxParams& params, OPKIT_LOC) {
  OPKIT_EMU_FLASHV3_CHECK;
  ::opkit_emu::adv_softmax_flashv3<isUpdate>(dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor,
                                             inMeanTensor, inExpSumTensor, inMaxTensor, &sharedTmpBuffer, tiling, params,
                                             loc);
}
#undef OPKIT_EMU_FLASHV3_TPL
#undef OPKIT_EMU_FLASHV3_CHECK
}  // namespace AscendC
