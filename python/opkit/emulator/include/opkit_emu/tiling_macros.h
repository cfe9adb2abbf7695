// Kernel-side tiling: GET_TILING_DATA / GET_TILING_DATA_WITH_STRUCT / GET_TILING_DATA_MEMBER /
// REGISTER_TILING_DEFAULT copy the tiling struct from GM (bounds-checked), TILING_KEY_IS reads the
// launch's tiling key, KERNEL_TASK_TYPE(_DEFAULT) are no-ops (facts sheet §5).
#pragma once
#include <cstddef>
#include <cstring>

#include "opkit_emu/runtime.h"

namespace opkit_emu {
inline void load_tiling(void* dst, size_t bytes, const void* tiling, SrcLoc loc) {
  gm_check(tiling, bytes, "GET_TILING_DATA", loc, "tiling");
  if (!tiling) fail("gm-bounds", "GET_TILING_DATA", loc, "tiling pointer is null");
  ctx().stats.gm_read_bytes += bytes;
  std::memcpy(dst, tiling, bytes);
}
}  // namespace opkit_emu

enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_MIX_VECTOR_CORE
};

#define GET_TILING_DATA_WITH_STRUCT(Type, var, tiling) \
  Type var;                                            \
  ::opkit_emu::load_tiling(&var, sizeof(Type), (tiling), ::opkit_emu::SrcLoc::current())
#define REGISTER_TILING_DEFAULT(Type) using OpkitTilingDefault_ = Type
#define GET_TILING_DATA(var, tiling) GET_TILING_DATA_WITH_STRUCT(OpkitTilingDefault_, var, tiling)
#define GET_TILING_DATA_MEMBER(Type, member, var, tiling)                                                    \
  decltype(Type::member) var;                                                                               \
  ::opkit_emu::load_tiling(&var, sizeof(var), reinterpret_cast<const uint8_t*>(tiling) + offsetof(Type, member), \
                           ::opkit_emu::SrcLoc::current())
#define TILING_KEY_IS(k) (::opkit_emu::ctx().tiling_key == static_cast<uint64_t>(k))
#define KERNEL_TASK_TYPE_DEFAULT(...)
#define KERNEL_TASK_TYPE(...)

