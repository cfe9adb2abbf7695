// DataCopy with SliceInfo: a multi-dimensional slice of a GM tensor to UB and back (A2: 支持).
// Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/DataCopy（GM与UB切片数据搬运）.md;
// struct: include/basic_api/kernel_struct_data_copy.h:394-412; algorithm: impl/basic_api/
// kernel_operator_data_copy_intf_impl.h:610-759 and kernel_operator_data_copy_base_impl.h:97-144.
//  - dimension 0 is the row: from startIndex to endIndex (inclusive), N bursts of burstLen 32-byte blocks,
//    `stride` elements apart; dimensions 1.. pick rows startIndex, startIndex + 1 + stride, ... up to endIndex
//    (burstLen must be 1 there); element (i0, i1, ...) sits at i0 + shape0 * (i1 + shape1 * (...));
//  - the shape of each dimension is shapeValue, or, when srcSliceInfo[0].shapeValue is 0, the tensors'
//    GetShapeInfo() (impl :631-635);
//  - the burst count and length come from srcSliceInfo (impl :644-647), the k-th burst of the src slice lands
//    on the k-th of the dst slice; the UB side's stride is taken in whole 32-byte blocks (impl :648, :725), so
//    a UB stride that is not a multiple of 32 bytes is a silent misplacement on the device (rule ub-alignment).
// Rules from the page's 约束说明: dimValue 1..8, the arrays as long as dimValue, startIndex < endIndex <=
// shapeValue (startIndex == endIndex, one row, is accepted: the implementation counts it as one slice, and
// user kernels pass it), endIndex - startIndex + 1 = (N - 1) * stride + N * burstLen * 32 / sizeof(T),
// burstLen 1 beyond dimension 0, src and dst burstLen equal; plus the copies' own: UB 32-byte aligned, the
// tensors' bounds, GM bounds.
#pragma once
#include <utility>

#include "opkit_emu/constants.h"
#include "opkit_emu/datacopy.h"
#include "opkit_emu/shape_info.h"

namespace AscendC {

// The most dimensions a slice names (impl/basic_api/utils/kernel_utils_constants.h:297; CANN's sample sizes its
// SliceInfo arrays with it).
const int32_t K_MAX_DIM = 8;

struct SliceInfo {
  SliceInfo() {}
  SliceInfo(const uint32_t startIndexIn, const uint32_t endIndexIn, const uint32_t strideIn,
            const uint32_t burstLenIn, const uint32_t shapeValueIn = 0)
      : startIndex(startIndexIn), endIndex(endIndexIn), stride(strideIn), burstLen(burstLenIn),
        shapeValue(shapeValueIn) {}
  uint32_t startIndex = 0;
  uint32_t endIndex = ONE_BLK_SIZE - 1;
  uint32_t stride = 0;
  uint32_t burstLen = ONE_BLK_SIZE;
  uint32_t shapeValue = 0;
};

}  // namespace AscendC

namespace opkit_emu {

constexpr uint32_t kMaxSliceCount = 6 * 256;  // MAX_SLICE_SIZE, impl/basic_api/utils/kernel_utils_constants.h:53

// One side of the copy, resolved: where each slice starts (elements from the tensor's start) and the bursts.
struct SlicePlan {
  std::vector<uint64_t> starts;   // one per slice (a row of dimension 0), elements
  uint32_t bursts = 0;            // N of dimension 0
  uint32_t burst_elems = 0;       // burstLen * 32 / sizeof(T)
  uint32_t stride = 0;            // elements between bursts of a row
  uint64_t extent = 0;            // elements from the tensor's start to the end of the last burst
};

template <class T>
SlicePlan slice_plan(const AscendC::SliceInfo info[], const uint32_t shape[], uint32_t dim, const char* side,
                     SrcLoc loc) {
  const char* call = "DataCopy with SliceInfo";
  SlicePlan p;
  p.burst_elems = static_cast<uint32_t>(uint64_t(info[0].burstLen) * kBlk / sizeof(T));
  p.stride = info[0].stride;
  p.starts.push_back(0);
  uint64_t pitch = 1, base = 0, last = 0;
  for (uint32_t i = 0; i < dim; ++i) {
    const AscendC::SliceInfo& s = info[i];
    if (s.startIndex > s.endIndex || s.endIndex > shape[i])
      fail("api-argument", call, loc,
           strf("%sSliceInfo[%u]: startIndex %u, endIndex %u, shape %u; the page needs startIndex < endIndex <= "
                "shapeValue", side, i, s.startIndex, s.endIndex, shape[i]));
    const uint64_t span = uint64_t(s.endIndex) - s.startIndex + 1;
    const uint64_t unit = i == 0 ? p.burst_elems : 1;  // a burst of dimension 0, one row beyond
    if (i > 0 && s.burstLen != 1)
      fail("api-argument", call, loc,
           strf("%sSliceInfo[%u].burstLen is %u; beyond dimension 0 it must be 1 (the page)", side, i, s.burstLen));
    if (unit == 0 || (span + s.stride) % (unit + s.stride) != 0)
      fail("api-argument", call, loc,
           strf("%sSliceInfo[%u]: endIndex - startIndex + 1 = %llu is not (N - 1) * stride + N * %llu for a whole N "
                "(stride %u%s)", side, i, (unsigned long long)span, (unsigned long long)unit, s.stride,
                i == 0 ? ", burstLen x 32 / sizeof(T) elements per burst" : ""));
    const uint64_t n = (span + s.stride) / (unit + s.stride);
    base += pitch * s.startIndex;
    if (i == 0) {
      p.bursts = static_cast<uint32_t>(n);
      last = (n - 1) * (unit + s.stride) + unit;  // the row's elements from its first
    } else {  // each earlier slice repeated at every row this dimension picks (impl base :97-124)
      const size_t prev = p.starts.size();
      for (uint64_t k = 1; k < n; ++k)
        for (size_t j = 0; j < prev; ++j) p.starts.push_back(p.starts[j] + k * (1 + s.stride) * pitch);
      if (p.starts.size() > kMaxSliceCount)
        fail("api-argument", call, loc,
             strf("%sSliceInfo describes %zu rows; CANN's implementation holds at most %u (MAX_SLICE_SIZE)", side,
                  p.starts.size(), kMaxSliceCount));
    }
    pitch *= shape[i];
  }
  uint64_t far = 0;
  for (uint64_t& s : p.starts) { s += base; far = std::max(far, s + last); }
  p.extent = far;
  return p;
}

template <class T>
void slice_shapes(const AscendC::SliceInfo dstInfo[], const AscendC::SliceInfo srcInfo[], uint32_t dim,
                  const AscendC::ShapeInfo& dshape, const AscendC::ShapeInfo& sshape, uint32_t* d, uint32_t* s,
                  SrcLoc loc) {
  const char* call = "DataCopy with SliceInfo";
  if (dim == 0 || dim > K_MAX_SHAPE_DIM)
    fail("api-argument", call, loc, strf("dimValue is %u; the page allows 1 to 8", dim));
  const bool own = srcInfo[0].shapeValue != 0;  // impl :631
  if (!own && (dshape.shapeDim < dim || sshape.shapeDim < dim))
    fail("api-argument", call, loc,
         strf("srcSliceInfo[0].shapeValue is 0, so the shapes come from the tensors' GetShapeInfo(), which have %u "
              "(src) and %u (dst) dimensions for dimValue %u; set shapeValue or SetShapeInfo",
              unsigned(sshape.shapeDim), unsigned(dshape.shapeDim), dim));
  for (uint32_t i = 0; i < dim; ++i) {
    s[i] = own ? srcInfo[i].shapeValue : sshape.shape[i];
    d[i] = own ? dstInfo[i].shapeValue : dshape.shape[i];
    if (srcInfo[i].burstLen != dstInfo[i].burstLen)
      fail("api-argument", call, loc,
           strf("srcSliceInfo[%u].burstLen %u != dstSliceInfo[%u].burstLen %u; the page needs them equal", i,
                srcInfo[i].burstLen, i, dstInfo[i].burstLen));
  }
}

// The two plans must describe the same bursts: CANN walks src's and indexes dst's list with it (impl :653-660).
inline void slice_match(const SlicePlan& d, const SlicePlan& s, SrcLoc loc) {
  if (d.starts.size() != s.starts.size() || d.bursts != s.bursts)
    fail("api-argument", "DataCopy with SliceInfo", loc,
         strf("src describes %zu rows of %u bursts, dst %zu rows of %u bursts; they must be the same", s.starts.size(),
              s.bursts, d.starts.size(), d.bursts));
}

inline void slice_ub_stride(uint32_t stride, size_t elem, const char* side, SrcLoc loc) {
  if (uint64_t(stride) * elem % kBlk != 0)
    fail("ub-alignment", "DataCopy with SliceInfo", loc,
         strf("%sSliceInfo[0].stride is %u elements = %llu bytes on the UB side, not a multiple of 32: the device "
              "takes it in whole 32-byte blocks (%llu) and misplaces the bursts", side, stride,
              (unsigned long long)(uint64_t(stride) * elem), (unsigned long long)(uint64_t(stride) * elem / kBlk)));
}

// Both directions' checks and plans: (src plan, dst plan) of a DataCopy with SliceInfo.
template <class T>
std::pair<SlicePlan, SlicePlan> slice_plans(const AscendC::SliceInfo dstSliceInfo[],
                                            const AscendC::SliceInfo srcSliceInfo[], uint32_t dimValue,
                                            const AscendC::ShapeInfo& dstShape, const AscendC::ShapeInfo& srcShape,
                                            SrcLoc loc) {
  check_copy_dtype<T>();
  static_assert(sizeof(T) <= 4 && !std::is_same<T, bool>::value,
                "opkit emulator: DataCopy with SliceInfo takes 8/16/32-bit types on A2 (the page's 数据类型)");
  uint32_t ds[K_MAX_SHAPE_DIM], ss[K_MAX_SHAPE_DIM];
  slice_shapes<T>(dstSliceInfo, srcSliceInfo, dimValue, dstShape, srcShape, ds, ss, loc);
  SlicePlan sp = slice_plan<T>(srcSliceInfo, ss, dimValue, "src", loc);
  SlicePlan dp = slice_plan<T>(dstSliceInfo, ds, dimValue, "dst", loc);
  slice_match(dp, sp, loc);
  return {std::move(sp), std::move(dp)};
}

}  // namespace opkit_emu

namespace AscendC {

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const SliceInfo dstSliceInfo[],
              const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, OPKIT_LOC) {
  using namespace opkit_emu;
  const char* call = "DataCopy with SliceInfo";
  const auto [sp, dp] =
      slice_plans<T>(dstSliceInfo, srcSliceInfo, dimValue, dst.GetShapeInfo(), src.GetShapeInfo(), loc);
  slice_ub_stride(dstSliceInfo[0].stride, sizeof(T), "dst", loc);
  const uint32_t burst = sp.burst_elems * sizeof(T);
  const uint64_t spitch = uint64_t(sp.burst_elems) + sp.stride, dpitch = uint64_t(sp.burst_elems) + dp.stride;
  const uint8_t* g = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  for (size_t k = 0; k < sp.starts.size(); ++k) {  // one MTE2 instruction per row, as CANN issues them
    ApiCall c(Pipe::MTE2, call, loc);
    c.write_rows(dst.m_, static_cast<uint32_t>(dp.starts[k] * sizeof(T)), sp.bursts, burst,
                 static_cast<uint32_t>(dpitch * sizeof(T)), 8 * sizeof(T), "dst (UB)");
    src.check(sp.starts[k], (sp.bursts - 1) * spitch + sp.burst_elems, call, loc);
    c.commit();
    for (uint32_t b = 0; b < sp.bursts; ++b)
      gm_load(dst.m_.addr + (dp.starts[k] + b * dpitch) * sizeof(T), g + (sp.starts[k] + b * spitch) * sizeof(T),
              burst);
  }
}

template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const SliceInfo dstSliceInfo[],
              const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, OPKIT_LOC) {
  using namespace opkit_emu;
  const char* call = "DataCopy with SliceInfo";
  const auto [sp, dp] =
      slice_plans<T>(dstSliceInfo, srcSliceInfo, dimValue, dst.GetShapeInfo(), src.GetShapeInfo(), loc);
  slice_ub_stride(srcSliceInfo[0].stride, sizeof(T), "src", loc);
  const uint32_t burst = sp.burst_elems * sizeof(T);
  const uint64_t spitch = uint64_t(sp.burst_elems) + sp.stride, dpitch = uint64_t(sp.burst_elems) + dp.stride;
  uint8_t* g = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  for (size_t k = 0; k < sp.starts.size(); ++k) {  // one MTE3 instruction per row
    ApiCall c(Pipe::MTE3, call, loc);
    sink_rows(c, src.m_, static_cast<uint32_t>(sp.starts[k] * sizeof(T)), sp.bursts, burst,
              static_cast<uint32_t>(spitch * sizeof(T)), 8 * sizeof(T), "src (UB)", g + dp.starts[k] * sizeof(T),
              dpitch * sizeof(T));
    dst.check(dp.starts[k], (sp.bursts - 1) * dpitch + sp.burst_elems, call, loc);
    c.commit();
    for (uint32_t b = 0; b < sp.bursts; ++b)
      gm_store(g + (dp.starts[k] + b * dpitch) * sizeof(T), src.m_.addr + (sp.starts[k] + b * spitch) * sizeof(T),
               burst);
  }
}

}  // namespace AscendC
