// Which block and which kind of core a kernel runs as: GetBlockIdx / GetBlockNum / GetSubBlockIdx /
// GetTaskRatio / GetArchVersion / GetSystemCycle / InitSocState, the CPU-debug globals block_idx /
// block_num / get_block_idx(), KernelMode, the core type (g_coreType, ASCEND_IS_AIV / ASCEND_IS_AIC) and
// ParamOffset. Declared where CANN declares them
// (mirror-cann/asc-devkit 82b89a15: impl/utils/sys_macros.h for g_coreType / ASCEND_IS_AIV, docs
// 调试接口/CPU孪生调试/SetKernelMode.md for KernelMode).
#pragma once
#include <chrono>
#include <cstdint>

#include "opkit_emu/runtime.h"

// KernelMode is a global name: samples write AscendC::SetKernelMode(KernelMode::AIV_MODE).
enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

namespace AscendC {
using ::KernelMode;
// Core types compared against g_coreType (ASCEND_IS_AIV etc.).
constexpr int32_t MIX = 0, AIC = 1, AIV = 2;
constexpr int32_t AIC_TYPE = AIC, AIV_TYPE = AIV;

inline int64_t GetBlockIdx() { return opkit_emu::ctx().idx; }
inline int64_t GetBlockNum() { return opkit_emu::ctx().num; }
// One vector core per block: sub-block 0 of 1, AIC:AIV ratio 1 (kernel_operator_sys_var_intf.h;
// GetTaskRation is the older spelling some kernels use).
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetSubBlockNum() { return 1; }
inline int64_t GetTaskRatio() { return 1; }
inline int64_t GetTaskRation() { return 1; }
// The core version of the chip (A2: 220, 310P: 200), as __CCE_AICORE__.
inline void GetArchVersion(uint32_t& coreVersion) { coreVersion = __CCE_AICORE__; }
// A monotonically increasing cycle count: the host's steady clock in ns (kernels use differences only).
inline int64_t GetSystemCycle() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Sets the vector unit's state as a kernel start does (kernel_operator_common_intf.h): no atomic add,
// normal mask mode, all lanes on.
inline void InitSocState() {
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  c.atomic_dtype = -1;
  c.mask_counter = false;
  c.mask_lo = c.mask_hi = ~0ull;
}

// Samples written for the first CANN releases (2023): this block's slice of a GM argument.
template <class T>
inline GM_ADDR ParamOffset(GM_ADDR addr, uint64_t blockLength) {
  return addr + static_cast<uint64_t>(GetBlockIdx()) * blockLength * sizeof(T);
}
}  // namespace AscendC

// The emulator runs vector (AIV) cores only: cube code behind ASCEND_IS_AIC is skipped, as on a
// vector core of a mixed kernel.
inline int32_t g_coreType = AscendC::AIV;
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)

namespace opkit_emu {
// block_idx / block_num read the running block (CANN's CPU mode keeps them as per-process globals;
// here blocks are threads). A kernel's own variable of the same name simply shadows them.
struct BlockIdxVar { operator int64_t() const { return ctx().idx; } };
struct BlockNumVar { operator int64_t() const { return ctx().num; } };
}  // namespace opkit_emu

inline constexpr opkit_emu::BlockIdxVar block_idx{};
inline constexpr opkit_emu::BlockNumVar block_num{};
inline int64_t get_block_idx() { return opkit_emu::ctx().idx; }
inline int64_t get_block_num() { return opkit_emu::ctx().num; }
