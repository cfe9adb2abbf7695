// DataCopy with DataCopyEnhancedParams, the struct and its enums; DataCopyMVType.
// Declarations: asc-devkit 82b89a15 include/basic_api/kernel_operator_data_copy_intf.h:282-342, struct
// include/basic_api/kernel_struct_data_copy.h:84-148, BlockMode impl/basic_api/utils/kernel_utils_mode_cpu.h:81-87,
// DeqScale impl/basic_api/utils/kernel_utils_mode.h:126-134. The page (docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/
// 矩阵计算的搬出/DataCopy（L0C到UB数据搬运）.md) says the enhancement works only on the Atlas inference AI Core's
// L0C->UB path; "other products and paths accept the call, the enhancement has no effect: the same as the basic
// copy" -- so on A2 the same-type forms are DataCopy(dst, src, DataCopyParams) with every rule of it, the
// enhanced parameters read by nothing. The forms whose element types differ exist for that L0C (CO1 -> CO2) path:
// the cube's, rejected by name.
#pragma once
#include "opkit_emu/datacopy.h"
#include "opkit_emu/unsupported.h"

// The device compiler's built-in padding-mode enum (bisheng; CPU-debug: CANN's stub). Only the default is named:
// the struct's padMode is "reserved, not supported yet" (the page, table 3).
enum class pad_t : uint8_t { PAD_NONE = 0 };

namespace AscendC {

enum class BlockMode : uint8_t {
  BLOCK_MODE_NORMAL = 0,
  BLOCK_MODE_MATRIX,
  BLOCK_MODE_VECTOR,
  BLOCK_MODE_SMALL_CHANNEL,
  BLOCK_MODE_DEPTHWISE,
};
enum class DeqScale : uint8_t { DEQ_NONE = 0, DEQ, VDEQ, DEQ8, VDEQ8, DEQ16, VDEQ16 };
enum class DataCopyMVType : uint8_t { UB_TO_OUT = 0, OUT_TO_UB = 1 };

struct DataCopyEnhancedParams {
  DataCopyEnhancedParams() {}
  DataCopyEnhancedParams(const BlockMode blockModeIn, const DeqScale deqScaleIn, const uint64_t deqValueIn,
                         const uint8_t sidStoreModeIn, const bool isReluIn, const pad_t padModeIn,
                         const uint64_t padValueIn)
      : blockMode(blockModeIn), deqScale(deqScaleIn), deqValue(deqValueIn), sidStoreMode(sidStoreModeIn),
        isRelu(isReluIn), padMode(padModeIn), padValue(padValueIn) {}
  BlockMode blockMode = BlockMode::BLOCK_MODE_NORMAL;
  DeqScale deqScale = DeqScale::DEQ_NONE;
  uint64_t deqValue = 0;
  uint8_t sidStoreMode = 0;
  bool isRelu = false;
  pad_t padMode = pad_t::PAD_NONE;
  uint64_t padValue = 0;
  uint64_t deqTensorAddr = 0;
};

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& intriParams,
              const DataCopyEnhancedParams&, OPKIT_LOC) {
  DataCopy(dst, src, intriParams, loc);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& intriParams,
              const DataCopyEnhancedParams&, OPKIT_LOC) {
  DataCopy(dst, src, intriParams, loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& intriParams,
              const DataCopyEnhancedParams&, OPKIT_LOC) {
  DataCopy(dst, src, intriParams, loc);
}
template <class T, class U, std::enable_if_t<!std::is_same<T, U>::value, bool> = true>
void DataCopy(const LocalTensor<T>&, const LocalTensor<U>&, const DataCopyParams&, const DataCopyEnhancedParams&) {
  static_assert(::opkit_emu::always_false<T, U>,
                OPKIT_EMU_REJECT_MSG(DataCopy, "between element types with DataCopyEnhancedParams: the L0C (CO1) to "
                                               "UB path of the cube"));
}

}  // namespace AscendC
