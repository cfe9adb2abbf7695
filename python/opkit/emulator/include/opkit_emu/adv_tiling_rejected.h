// The cube unit's tiling structs of CANN's kernel_tiling.h, which the emulator does not run (opkit/cann_adv_tiling.h lists
// them): declaring a member of one (TILING_DATA_FIELD_DEF_STRUCT) or an object of it stops the build with
// "not supported on the emulator: NAME". In AscendC::tiling, exported at global scope as CANN's generated header
// exports its legacy structs. TCubeTiling is the exception: vector ops of ops-nn declare one in their tiling
// struct (a field they never read on the vector core), and declaring it is no use of the cube -- so it is a real
// struct here (CANN's layout), while using Matmul stays rejected (lib/matmul_intf.h).
#pragma once
#include "opkit_emu/adv_tiling.h"
#include "opkit_emu/adv_tiling_vector.h"  // the advanced vector APIs' structs: declared, not rejected

namespace opkit_emu {
template <class...> inline constexpr bool adv_tiling_false = false;
}  // namespace opkit_emu

namespace AscendC {
namespace tiling {
// Declaring a member of one of these (TILING_DATA_FIELD_DEF_STRUCT) or an object of it fails with the message.
#define OPKIT_EMU_REJECT_TILING(NAME, WHY)                                                                   \
  template <class P = void>                                                                                \
  struct OpkitRejected##NAME {                                                                              \
    static_assert(::opkit_emu::adv_tiling_false<P>, "not supported on the emulator: " #NAME " (" WHY          \
                                                    "; see docs/cann.md)");                               \
  };                                                                                                       \
  using NAME = OpkitRejected##NAME<>;
#define OPKIT_EMU_REJECT_CUBE(NAME) OPKIT_EMU_REJECT_TILING(NAME, "tiling of the cube unit, which the emulator does not run")
OPKIT_CUBE_TILING_STRUCTS_BUT_TCUBE(OPKIT_EMU_REJECT_CUBE)
#undef OPKIT_EMU_REJECT_CUBE
#undef OPKIT_EMU_REJECT_TILING
#define OPKIT_EMU_TILING_FIELD(type, name) type name = 0;
#pragma pack(push, 8)
struct TCubeTiling {
  OPKIT_TCUBE_TILING_FIELDS(OPKIT_EMU_TILING_FIELD)
};
#pragma pack(pop)
#undef OPKIT_EMU_TILING_FIELD
}  // namespace tiling
}  // namespace AscendC

#define OPKIT_EMU_EXPORT_TILING(NAME) using AscendC::tiling::NAME;
OPKIT_CUBE_TILING_STRUCTS(OPKIT_EMU_EXPORT_TILING)
#undef OPKIT_EMU_EXPORT_TILING
