// CANN's lib/math/log.h (asc-devkit 82b89a15 include/adv_api/math/log.h; page
// docs/zh/api/SIMD-API/高阶API/数学计算/Log接口/Log.md): Log (natural), Log2, Log10, half and float on A2.
// Log and Log10 take no sharedTmpBuffer (GetLog/Log10MaxMinTmpSize give 0: impl/adv_api/tiling/math/log_tiling.cpp:44-78);
// Log2 needs 256 bytes for half, nothing for float (log_tiling.cpp:23-31). Engine: opkit_emu/adv_math.h.
#pragma once
#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
#define OPKIT_EMU_ADV_LOG_NOTMP(NAME, FN)                                                                            \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount, OPKIT_LOC) {        \
    static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: " #NAME " supports half and float on this chip"); \
    ::opkit_emu::adv_unary<T>(#NAME, "Get" #NAME "MaxMinTmpSize", dstTensor, srcTensor, nullptr, calCount, 0,        \
                              [](float x) { return FN; }, loc);                                                      \
  }                                                                                                                  \
  template <typename T, bool isReuseSource = false>                                                                  \
  void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, OPKIT_LOC) {                           \
    NAME<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize(), loc);                                          \
  }
OPKIT_EMU_ADV_LOG_NOTMP(Log, ::opkit_emu::hm::log(x))
OPKIT_EMU_ADV_LOG_NOTMP(Log10, ::opkit_emu::hm::log10(x))
#undef OPKIT_EMU_ADV_LOG_NOTMP
}  // namespace AscendC

OPKIT_EMU_ADV_UNARY(Log2, "GetLog2MaxMinTmpSize", (::opkit_emu::AdvTmp{0, 0, 256}), ::opkit_emu::hm::log2(x))
