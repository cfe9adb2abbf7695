// Host side of CANN's tiling/tiling_api.h for opkit's CPU run of a project's TilingFunc (docs/cann.md).
// Implemented: LayerNorm's, LayerNormGrad's, LayerNormGradBeta's, DeepNorm's, BatchNorm's, GroupNorm's (normalization/*_tiling.h), SoftmaxGrad's
// (activation/softmax_grad_tiling.h), LogSoftMax's (activation/logsoftmax_tiling.h), SoftmaxFlash's, SoftmaxFlashV2's, Sort's
// queries and TopK's tiling (sort/sort_tiling_intf.h, sort/topk_tiling.h), AscendAntiQuant's buffer queries
// (quantization/ascend_antiquant_tiling.h), Pad's / UnPad's tiling (pad/pad_tiling.h),
// Transpose's scenes 1, 2, 7 (transpose/confusion_transpose_tiling.h), TransData's buffer query
// (transpose/transdata_tiling.h); the SoftMax family's tiling (optiling::SoftMaxTiling / LogSoftMaxTiling, SoftMaxTilingFunc,
// GetSoftMaxMaxTmpSize / GetSoftMaxMinTmpSize, IsBasicBlockInSoftMax), written here after mirror-cann/asc-devkit
// impl/adv_api/tiling/activation/softmax_tiling.cpp (read, not copied; the A2 branch: arch 2201), taking the
// ge::Shape of the CANN releases public op projects were written for. The kernel gets the same structs from
// the emulator (opkit_emu/adv_tiling.h) and runs SoftMax there. The cube unit's tiling (matmul_tiling::*,
// TCubeTiling, Conv3D, Mc2) and the other advanced APIs' structs are declared so that using one stops the
// build with "not supported on the emulator: NAME".
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "opkit/adv_tiling_softmax.h"  // AscendC::tiling::SoftMaxTiling, the kernel-side overloads' type
#include "opkit/cann_adv_tiling.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"
#include "opkit/softmax_rows.h"
// the advanced APIs' host tiling, one header per family as CANN's tiling_api.h includes them
#include "normalization/layernorm_tiling.h"
#include "normalization/layernorm_grad_tiling.h"
#include "normalization/layernorm_grad_beta_tiling.h"
#include "normalization/deepnorm_tiling.h"
#include "normalization/batchnorm_tiling.h"
#include "normalization/groupnorm_tiling.h"
#include "normalization/welfordfinalize_tiling.h"
#include "normalization/normalize_tiling.h"
#include "reduce/reduce_tiling.h"
#include "sort/sort_tiling_intf.h"
#include "sort/topk_tiling.h"
#include "quantization/ascend_antiquant_tiling.h"
#include "pad/pad_tiling.h"
#include "transpose/confusion_transpose_tiling.h"
#include "transpose/transdata_tiling.h"

namespace opkit_cann {
template <class...> inline constexpr bool adv_false = false;
}  // namespace opkit_cann

namespace optiling {
#define OPKIT_CANN_TILING_FIELD(type, name) TILING_DATA_FIELD_DEF(type, name);
BEGIN_TILING_DATA_DEF(SoftMaxTiling)
OPKIT_SOFTMAX_TILING_FIELDS(OPKIT_CANN_TILING_FIELD)
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(LogSoftMaxTiling)
OPKIT_SOFTMAX_TILING_FIELDS(OPKIT_CANN_TILING_FIELD)
END_TILING_DATA_DEF;
#undef OPKIT_CANN_TILING_FIELD

#define OPKIT_CANN_REJECT(NAME, WHY)                                                                          \
  template <class P = void>                                                                                  \
  struct OpkitRejected##NAME {                                                                                \
    static_assert(::opkit_cann::adv_false<P>, "not supported on the emulator: " #NAME " (" WHY "; see docs/cann.md)"); \
  };                                                                                                         \
  using NAME = OpkitRejected##NAME<>;
#define OPKIT_CANN_REJECT_CUBE(NAME) OPKIT_CANN_REJECT(NAME, "tiling of the cube unit, which the emulator does not run")
#define OPKIT_CANN_REJECT_ADV(NAME) OPKIT_CANN_REJECT(NAME, "advanced-API tiling not implemented on the emulator")
OPKIT_CUBE_TILING_STRUCTS(OPKIT_CANN_REJECT_CUBE)
OPKIT_OTHER_ADV_TILING_STRUCTS(OPKIT_CANN_REJECT_ADV)
#undef OPKIT_CANN_REJECT_CUBE
#undef OPKIT_CANN_REJECT_ADV
}  // namespace optiling

namespace matmul_tiling {
// constructing one fails: Matmul runs on the cube unit
#define OPKIT_CANN_REJECT_CLASS(NAME)                                                                          \
  struct NAME {                                                                                                \
    template <class... A>                                                                                      \
    NAME(A&&...) {                                                                                             \
      static_assert(::opkit_cann::adv_false<A...>, "not supported on the emulator: matmul_tiling::" #NAME       \
                                                   " (tiling of the cube unit, which the emulator does not run; " \
                                                   "see docs/cann.md)");                                        \
    }                                                                                                          \
  };
OPKIT_CANN_REJECT_CLASS(MatmulApiTiling)
OPKIT_CANN_REJECT_CLASS(MultiCoreMatmulTiling)
OPKIT_CANN_REJECT_CLASS(BatchMatmulTiling)
#undef OPKIT_CANN_REJECT_CLASS
}  // namespace matmul_tiling

namespace AscendC {
// The shape and dtype names the advanced APIs' host functions take (asc-devkit 82b89a15
// include/adv_api/utils/types.h:17-20); a `.asc` program's tiling code spells the shape AscendC::TensorShape.
using TensorShape = ge::Shape;
using TensorDataType = ge::DataType;

namespace softmax_detail {
constexpr uint32_t kBlk = 32, kFloat = 4, kBasicUnit = 64, kBasicMin = 256;
// [m, k]: the last axis and the product of the others
inline std::pair<uint32_t, uint32_t> last_axis(const ge::Shape& s) {
  const uint32_t k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
  const uint32_t n = static_cast<uint32_t>(s.GetShapeSize());
  return {k ? n / k : 0, k};
}
}  // namespace softmax_detail

// Bytes of float work buffer SoftMax needs: Max for the whole [m, k] at once, Min for one row.
inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
  using namespace softmax_detail;
  (void)isReuseSource;
  if (srcShape.GetShapeSize() <= 0 || (dataTypeSize != 2 && dataTypeSize != 4)) return 0;
  const auto mk = last_axis(srcShape);
  return mk.first * (kBlk / dataTypeSize + mk.second + kBasicUnit) * kFloat;
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
  using namespace softmax_detail;
  (void)isReuseSource;
  if (srcShape.GetShapeSize() <= 0 || (dataTypeSize != 2 && dataTypeSize != 4)) return 0;
  return (kBlk / dataTypeSize + last_axis(srcShape).second + kBasicUnit) * kFloat;
}

// The tiling: rows per pass (splitM) as many as the work buffer holds, cut to basic blocks where the shape
// allows; outputs sum/max are one 32-byte block per row.
// (either tiling type: optiling::SoftMaxTiling or the kernel's AscendC::tiling::SoftMaxTiling, as CANN overloads it)
template <class SoftMaxTilingT>
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize, const uint32_t localWorkSpaceSize,
                              SoftMaxTilingT& t) {
  using namespace softmax_detail;
  if (srcShape.GetShapeSize() <= 0 || (dataTypeSize != 2 && dataTypeSize != 4)) return;
  const auto mk = last_axis(srcShape);
  const uint32_t m = mk.first, k = mk.second, perBlk = kBlk / dataTypeSize;
  const uint32_t fit = localWorkSpaceSize / kFloat / (perBlk + k + kBasicUnit);  // rows the work buffer holds
  const uint32_t baseM = ::opkit::softmax_rows::rows_per_pass(fit, m, k);
  ::opkit::softmax_rows::fill(t, m, k, perBlk, baseM);
}

// Whether SoftMax may run on basic blocks: no tail rows, the last axis a multiple of 64 in [256 / size, 2048).
// Both tiling types, as CANN declares (include/adv_api/activation/softmax_tiling.h:175-177).
namespace softmax_detail {
inline bool basic_block(uint32_t k, uint32_t tailM, uint32_t dataTypeSize) {
  return dataTypeSize != 0 && tailM == 0 && k >= kBasicMin / dataTypeSize && k < 2048 && k % kBasicUnit == 0;
}
}  // namespace softmax_detail
inline bool IsBasicBlockInSoftMax(optiling::SoftMaxTiling& t, const uint32_t dataTypeSize = 2) {
  return softmax_detail::basic_block(t.get_srcK(), t.get_tailM(), dataTypeSize);
}
inline bool IsBasicBlockInSoftMax(AscendC::tiling::SoftMaxTiling& t, const uint32_t dataTypeSize = 2) {
  return softmax_detail::basic_block(t.srcK, t.tailM, dataTypeSize);
}
}  // namespace AscendC

// the SoftMax family's further host functions, after SoftMaxTiling above
#include "activation/softmax_grad_tiling.h"
#include "activation/logsoftmax_tiling.h"
#include "activation/softmax_flash_tiling.h"
#include "activation/softmax_flashv2_tiling.h"
#include "activation/softmax_flashv3_tiling.h"
#include "tiling/opkit_adv_tmp_sizes.h"
#include "tiling/opkit_adv_activation_tmp_sizes.h"
#include "tiling/opkit_adv_math_more_tmp_sizes.h"
