// CANN's lib/activation/logsoftmax.h (asc-devkit 82b89a15 include/adv_api/activation/logsoftmax.h; page
// docs/zh/api/SIMD-API/高阶API/激活函数/LogSoftMax接口/LogSoftMax.md): LogSoftMax of an ND [srcM, srcK] tensor, half and
// float, with sharedTmpBuffer (the only A2 form):
//   template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
//   LogSoftMax(dst, sum, max, src, sharedTmpBuffer, const LogSoftMaxTiling&, const SoftMaxShapeInfo& = {})
// NB: the result is log10 of the softmax -- the page's formula (np.log10) and the A2 code (Ln, then Muls by
// 0.4342944819 = log10(e): impl/adv_api/detail/activation/softmax/membase/common/logsoftmax_common_impl.h:31,
// :277-311) agree; torch's log_softmax is the natural log. Per row, in float (half: cast in, outputs cast back
// once; impl :313-409): max over the first oriSrcK columns, e = exp(x - max), sum over the first oriSrcK columns,
// dst = ln(e / sum) x 0.4342944819 over all srcK columns; sum / max are the row's values broadcast over one 32-byte
// block (32 / sizeof(T) per row). The sum adds 64-float repeats as the count-form ReduceSum does (as SoftMax here):
// equal within float rounding, not bitwise. The kernel recomputes its tiling from the buffer's size (logsoftmax_
// base_impl.h: SoftMaxTilingFunc on sharedTmpBuffer), so the LogSoftMaxTiling argument is not read. Checked as
// SoftMax: an empty SoftMaxShapeInfo (CANN would read the tensor's ShapeInfo, which the emulator does not keep),
// srcK x sizeof(T) not a multiple of 32, oriSrcK beyond srcK, tensors too small are api-argument; a
// sharedTmpBuffer below GetLogSoftMaxMinTmpSize's minimum ((32 / sizeof(T) + srcK + 64) x 4 bytes,
// impl/adv_api/tiling/activation/logsoftmax_tiling.cpp:84-117: one row, below which the recomputed tiling has no
// row and the kernel asserts) is tensor-bounds. NZ: a compile error. Poison: a row is poison in every output
// when one of its reduced lanes is.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"
#include "opkit_emu/adv_softmax.h"

namespace opkit_emu {
constexpr float kLog10E = 0.4342944819f;  // CANN's SCALAR_NATURE_LOG_10

template <class T>
void adv_log_softmax(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& sum,
                     const AscendC::LocalTensor<T>& max, const AscendC::LocalTensor<T>& src,
                     const AscendC::LocalTensor<uint8_t>& tmp, const AscendC::SoftMaxShapeInfo& s, SrcLoc loc) {
  static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                "opkit emulator: LogSoftMax supports half and float (LogSoftMax.md, A2)");
  const char* api = "LogSoftMax";
  softmax_shape_checks<T>(api, s, loc);
  const uint32_t M = s.srcM, K = s.srcK, oriK = s.oriSrcK == 0 ? K : s.oriSrcK, blk = kBlk / sizeof(T);
  const uint64_t n = uint64_t(M) * K, nr = uint64_t(M) * blk;
  if (src.GetSize() < n || dst.GetSize() < n || sum.GetSize() < nr || max.GetSize() < nr)
    fail("api-argument", api, loc,
         strf("[srcM, srcK] = [%u, %u], but src holds %u, dst %u (need %llu), sum %u and max %u elements (need %llu)",
              M, K, src.GetSize(), dst.GetSize(), static_cast<unsigned long long>(n), sum.GetSize(), max.GetSize(),
              static_cast<unsigned long long>(nr)));
  const uint32_t need = (blk + K + 64) * 4;
  if (tmp.GetSize() < need)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetLogSoftMaxMinTmpSize gives as the minimum for "
              "srcK %u (one row)", tmp.GetSize(), need, K));
  ApiCall c(Pipe::V, api, loc);
  c.src(src, n, "src").dst(dst, n, "dst").dst(sum, nr, "sum").dst(max, nr, "max");
  c.dst(tmp, tmp.GetSize(), "sharedTmpBuffer");
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {  // before dst (which may be src) is written
    bad.assign(M, 0);
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t k = 0; k < oriK && !bad[r]; ++k) bad[r] = ApiCall::lane_poisoned(c.operand(0), uint64_t(r) * K + k);
  }
  ctx().stats.vector_elems += n;
  std::vector<float> e(K);
  std::vector<T> out(n);
  for (uint32_t r = 0; r < M; ++r) {
    const T* x = src.data() + uint64_t(r) * K;
    float mx = to_f(x[0]);
    for (uint32_t k = 1; k < oriK; ++k) mx = OpMax::ap(mx, to_f(x[k]));  // a NaN anywhere gives NaN (OpMax)
    for (uint32_t k = 0; k < K; ++k) e[k] = hm::exp(to_f(x[k]) - mx);
    const float sm = reduce_sum_loop<float>(e.data(), oriK);
    for (uint32_t k = 0; k < K; ++k) out[uint64_t(r) * K + k] = softmax_out<T>(hm::log(e[k] / sm) * kLog10E);
    for (uint32_t k = 0; k < blk; ++k) {
      sum.data()[uint64_t(r) * blk + k] = softmax_out<T>(sm);
      max.data()[uint64_t(r) * blk + k] = softmax_out<T>(mx);
    }
  }
  T* d = dst.data();
  for (uint64_t k = 0; k < n; ++k) d[k] = out[k];
  shadow_fill(tmp.m_.ub_off(), tmp.m_.bytes, true);  // the work buffer now holds intermediates
  for (uint32_t r = 0; r < M; ++r) {
    const bool ok = bad.empty() || !bad[r];
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(uint64_t(r) * K * sizeof(T)), K * sizeof(T), ok);
    shadow_fill(sum.m_.ub_off() + r * kBlk, kBlk, ok);
    shadow_fill(max.m_.ub_off() + r * kBlk, kBlk, ok);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
void LogSoftMax(const LocalTensor<T>& dst, const LocalTensor<T>& sum, const LocalTensor<T>& max,
                const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer, const LogSoftMaxTiling& tiling,
                const SoftMaxShapeInfo& softmaxShapeInfo = {}, OPKIT_LOC) {
  static_assert(!isDataFormatNZ, "not supported on the emulator: LogSoftMax with isDataFormatNZ");
  (void)tiling;  // recomputed from the buffer by the kernel, as on the device
  ::opkit_emu::adv_log_softmax<T>(dst, sum, max, src, sharedTmpBuffer, softmaxShapeInfo, loc);
}
}  // namespace AscendC
