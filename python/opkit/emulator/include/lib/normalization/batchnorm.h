// CANN's lib/normalization/batchnorm.h (asc-devkit 82b89a15 include/adv_api/normalization/batchnorm.h:44-79; page
// docs/zh/api/SIMD-API/高阶API/归一化操作/BatchNorm.md): BatchNorm of a [B, S, H] ND tensor over its first axis B,
// half and float, with and without sharedTmpBuffer:
//   template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
//   BatchNorm(output, outputMean, outputVariance, inputX, gamm, beta[, sharedTmpBuffer], const T epsilon,
//             BatchNormTiling& tiling)
// gamm / beta hold B values (one per batch row, broadcast over S x H); mean / variance hold S x H.
// Computed as the A2 implementation does (impl/adv_api/detail/normalization/batchnorm/batchnorm_common_impl.h,
// batchnorm_common_pre_impl.h), in float (half: inputX, gamm, beta and epsilon cast to float, the three outputs cast
// back once), each step rounded to float, per column j of S x H: mean = x[0][j] x back + x[1][j] x back + ... added
// in batch order (GetReduceAddResult, pre_impl :179-217: a copy of row 0 then one Add per row; the basic-block form
// adds the rows in the same order), d = x - mean, var = sum of (d x d) x back in the same order, rstd =
// Exp(Ln(var + eps) x -0.5) (GetBatchNormOutputPreProcess, pre_impl :372-388), out[b][j] = beta[b] + gamm[b] x (d x rstd);
// back = tiling.firstDimValueBack (1 / B). Ln and Exp are the emulator's (the C library's logf / expf), so the
// result equals CANN's within the rounding of those two; not checked on a device.
// inputX and output may be the same tensor (BatchNorm.md:74 allows it): each column's B values are read before any
// is written. Rounds follow the tiling (shCurLength columns each, then the tail), and the tail round leaves its lengths in the
// caller's tiling (BatchNormCompute :299-303), as the device does. isReuseSource: refused, as CANN's kernel check
// does for every T (batchnorm_check_common.h: IsReuseSourceVerifyingParameters<false>); the computation never
// reads it (GetBatchNormInfo :177-212).
// Checked (api-argument): the tiling filled (oneTmpSize > 0), thirdTmpStartPos + oneTmpSize <= tmpBufSize
// (:187-191), S x H x sizeof(T) a multiple of 32 (tiling :66-69), isBasicBlock only with S x H % 64 == 0, S x H < 2048
// (BatchNorm.md) and B % 8 == 0 (tiling :42-48), gamm / beta GetSize() x sizeof(T) multiples of 32 (batchnorm_check_common.h), the tensors
// holding B x S x H / S x H / B, output / outputMean / outputVariance not the same tensor (CANN's kernel check,
// batchnorm_check_common.h:91-92) nor overlapping (the emulator's, adv_disjoint.h); isBasicBlock with B > 256 is not-emulated (GetReduceAddResult's repeat tail
// restarts at row 1, pre_impl :202-205, a result we do not guess). tensor-bounds: a sharedTmpBuffer below
// GetBatchNormMaxMinTmpSize's minimum (3 x B x 32 bytes for float, 3 x B x 64 for half, 3 x B x 256 with
// isBasicBlock, plus 2 x align32(S x H x 4): batchnorm_tiling_impl.cpp:99-125) or below the tiling's tmpBufSize
// floats (StackBufferChecker, pre_impl :41-48). Poison: a column is poison in every output when one of its inputX
// lanes is; the output too when a gamm / beta lane is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_disjoint.h"
#include "opkit_emu/host_math.h"

namespace opkit_emu {
// GetBatchNormMaxMinTmpSize's minimum (batchnorm_tiling_impl.cpp:99-125)
inline uint32_t batchnorm_min_tmp(uint32_t b, uint32_t sh, uint32_t size, bool basic) {
  const uint32_t per = basic ? b * 64 * 4 : size == 2 ? b * 64 : b * 32;
  return 3 * per + 2 * ((sh * 4 + 31) / 32 * 32);
}

template <class T, bool reuse, bool basic, class Tiling>
void adv_batchnorm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean,
                   const AscendC::LocalTensor<T>& var, const AscendC::LocalTensor<T>& x,
                   const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<T>& beta,
                   const AscendC::LocalTensor<uint8_t>* tmp, T eps, Tiling& t, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: BatchNorm supports half and float (BatchNorm.md, A2)");
  const char* api = "BatchNorm";
  if (reuse)
    fail("api-argument", api, loc,
         "isReuseSource must be false: CANN's kernel check refuses it for every type (batchnorm_check_common.h, "
         "IsReuseSourceVerifyingParameters<false>)");
  if (t.oneTmpSize == 0 || t.originalBLength == 0)
    fail("api-argument", api, loc,
         "tiling.oneTmpSize is 0: the BatchNormTiling was not filled (GetBatchNormNDTilingInfo), or its "
         "stackBufferByteSize was below GetBatchNormMaxMinTmpSize's minimum");
  if (t.thirdTmpStartPos + t.oneTmpSize > t.tmpBufSize)
    fail("api-argument", api, loc,
         strf("tiling thirdTmpStartPos + oneTmpSize (%u) exceeds tmpBufSize (%u)", t.thirdTmpStartPos + t.oneTmpSize,
              t.tmpBufSize));
  const uint32_t B = t.originalBLength, SH = t.meanVarSize;
  if (SH == 0 || SH * sizeof(T) % kBlk)
    fail("api-argument", api, loc,
         strf("tiling meanVarSize (S x H) %u: S x H x sizeof(T) must be a non-zero multiple of 32 (BatchNorm-Tiling.md)",
              SH));
  if (basic && (SH % 64 || SH >= 2048 || B % 8))
    fail("api-argument", api, loc,
         strf("isBasicBlock needs S x H (%u) a multiple of 64 below 2048 and B (%u) a multiple of 8 (BatchNorm.md)",
              SH, B));
  if (basic && B > 256)
    fail("not-emulated", api, loc,
         strf("isBasicBlock with B = %u > 256: A2's basic-block batch sum re-adds from row 1 after 255 repeats "
              "(batchnorm_common_pre_impl.h:202-205); the emulator does not guess that result", B));
  const uint64_t total = uint64_t(B) * SH;
  if (x.GetSize() < total || out.GetSize() < total || mean.GetSize() < SH || var.GetSize() < SH ||
      gamma.GetSize() < B || beta.GetSize() < B)
    fail("api-argument", api, loc,
         strf("B x S x H = %u x %u, but inputX holds %u, output %u (need B x S x H), outputMean %u, outputVariance %u "
              "(need S x H), gamm %u and beta %u elements (need B)",
              B, SH, x.GetSize(), out.GetSize(), mean.GetSize(), var.GetSize(), gamma.GetSize(), beta.GetSize()));
  if (gamma.GetSize() * sizeof(T) % kBlk || beta.GetSize() * sizeof(T) % kBlk)
    fail("api-argument", api, loc,
         strf("gamm holds %u bytes and beta %u: each must be 32-byte aligned (batchnorm_check_common.h)",
              uint32_t(gamma.GetSize() * sizeof(T)), uint32_t(beta.GetSize() * sizeof(T))));
  if (tmp) {
    const uint32_t host_min = batchnorm_min_tmp(B, SH, sizeof(T), basic);
    if (tmp->GetSize() < host_min)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetBatchNormMaxMinTmpSize gives as the minimum "
                "for [B = %u, S x H = %u]", tmp->GetSize(), host_min, B, SH));
    if (tmp->GetSize() / 4 < t.tmpBufSize)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the tiling's tmpBufSize %u floats (the stackBufferByteSize it "
                "was made for)", tmp->GetSize(), t.tmpBufSize));
  }
  adv_check_disjoint(api, loc, {used_range(out, total, "output"), used_range(mean, SH, "outputMean"),
                                used_range(var, SH, "outputVariance")});
  ApiCall c(Pipe::V, api, loc);
  c.dst(out, total, "output").dst(mean, SH, "outputMean").dst(var, SH, "outputVariance");
  c.src(x, total, "inputX").src(gamma, B, "gamm").src(beta, B, "beta");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;  // per column: 1 inputX poison, 2 gamm / beta poison
  if (c.commit(Flow::Manual)) {
    bool gb = false;
    for (uint32_t b = 0; b < B && !gb; ++b)
      gb = ApiCall::lane_poisoned(c.operand(4), b) || ApiCall::lane_poisoned(c.operand(5), b);
    bad.assign(SH, gb ? 2 : 0);
    for (uint32_t j = 0; j < SH; ++j)
      for (uint32_t b = 0; b < B && !(bad[j] & 1); ++b)
        if (ApiCall::lane_poisoned(c.operand(3), uint64_t(b) * SH + j)) bad[j] |= 1;
  }
  ctx().stats.vector_elems += total;
  std::vector<float> g(B), be(B), d(B);
  for (uint32_t b = 0; b < B; ++b) g[b] = to_f(gamma.data()[b]), be[b] = to_f(beta.data()[b]);
  const float back = t.firstDimValueBack, e = to_f(eps);
  std::vector<uint8_t> done(SH, 0);
  auto round = [&](uint32_t j0, uint32_t n) {
    for (uint32_t j = j0; j < j0 + n && j < SH; ++j) {
      float m = 0.0f;
      for (uint32_t b = 0; b < B; ++b) {
        const float v = to_f(x.data()[uint64_t(b) * SH + j]) * back;
        m = b == 0 ? v : m + v;
      }
      float s = 0.0f;
      for (uint32_t b = 0; b < B; ++b) {
        d[b] = to_f(x.data()[uint64_t(b) * SH + j]) - m;
        const float v = (d[b] * d[b]) * back;
        s = b == 0 ? v : s + v;
      }
      const float rstd = hm::exp(hm::log(s + e) * -0.5f);
      for (uint32_t b = 0; b < B; ++b) out.data()[uint64_t(b) * SH + j] = from_f<T>(be[b] + g[b] * (d[b] * rstd));
      mean.data()[j] = from_f<T>(m);
      var.data()[j] = from_f<T>(s);
      done[j] = 1;
    }
  };
  for (uint32_t i = 0; i < t.loopRound; ++i) round(i * t.shCurLength, t.shCurLength);
  if (t.inputTailSize > 0) {
    t.bshCurLength = t.inputTailSize;  // as the device does: the caller's tiling keeps the tail's lengths
    t.shCurLength = t.meanVarTailSize;
    t.shCurLengthBlockNum = t.shCurLength / 8;
    round(t.meanVarTailPos, t.meanVarTailSize);
  }
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint32_t j = 0; j < SH; ++j) {
    if (!done[j]) continue;
    const bool colok = bad.empty() || !bad[j], xok = bad.empty() || !(bad[j] & 1);
    for (uint32_t b = 0; b < B; ++b)
      shadow_fill(out.m_.ub_off() + static_cast<uint32_t>((uint64_t(b) * SH + j) * sizeof(T)), sizeof(T), colok);
    shadow_fill(mean.m_.ub_off() + static_cast<uint32_t>(j * sizeof(T)), sizeof(T), xok);
    shadow_fill(var.m_.ub_off() + static_cast<uint32_t>(j * sizeof(T)), sizeof(T), xok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, class BatchNormTilingT>
void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamm, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, BatchNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_batchnorm<T, isReuseSource, isBasicBlock>(output, outputMean, outputVariance, inputX, gamm, beta,
                                                             &sharedTmpBuffer, epsilon, tiling, loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, class BatchNormTilingT>
void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamm, const LocalTensor<T>& beta, const T epsilon,
               BatchNormTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_batchnorm<T, isReuseSource, isBasicBlock>(output, outputMean, outputVariance, inputX, gamm, beta,
                                                             nullptr, epsilon, tiling, loc);
}
}  // namespace AscendC
