// CANN's lib/matmul_intf.h (asc-devkit 82b89a15 include/adv_api/matmul/matmul_intf.h): the Matmul high-level API,
// which runs on the cube (matrix) unit. The emulator runs vector cores only, so every name of it is rejected -- but
// only where it is used: CANN's vector kernels often include this header for a shared helper and never touch the
// cube (ops-nn, 17 A2 vector entries; issue 39), and including it must not stop their build. Using a name (declaring
// a `Matmul<...>` object, `MatmulType<...>`, CFG_NORM, REGIST_MATMUL_OBJ, ...) stops the build with
// "not supported on the emulator: NAME". The names follow matmul_intf.h / matmul_config.h of asc-devkit.
#pragma once
#include "kernel_operator.h"

#define OPKIT_EMU_MM_WHY "Matmul runs on the cube unit, which the emulator does not run"
OPKIT_EMU_REJECT_FN(GetNormalConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetMDLConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetSpecialMDLConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetBasicConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetSpecialBasicConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetIBShareNormConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetMMConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(GetMatmulApiTiling, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_FN(REGIST_MATMUL_OBJ, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_TYPE(MatmulConfig, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_TYPE(MatmulApiStaticTiling, OPKIT_EMU_MM_WHY)
OPKIT_EMU_REJECT_TEMPLATE(MatmulCallBackFunc, OPKIT_EMU_MM_WHY)

namespace AscendC {
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR, COLUMN_MAJOR };
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class MatmulConfigMode { CONFIG_NORM, CONFIG_MDL, CONFIG_SPECIALMDL, CONFIG_IBSHARE };
// The default configuration objects: naming one is already a use of the cube.
struct OpkitMatmulCfg {};
inline constexpr OpkitMatmulCfg CFG_NORM{}, CFG_MDL{}, CFG_IBSHARE_NORM{}, MM_CFG_BB{};
template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false, TPosition SRCPOS = TPosition::GM>
struct MatmulType {
  static_assert(::opkit_emu::always_false<TYPE>, OPKIT_EMU_REJECT_MSG(MatmulType, OPKIT_EMU_MM_WHY));
};
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class... REST>
struct Matmul {
  static_assert(::opkit_emu::always_false<A_TYPE>, OPKIT_EMU_REJECT_MSG(Matmul, OPKIT_EMU_MM_WHY));
};
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class... REST>
struct MatmulImpl {
  static_assert(::opkit_emu::always_false<A_TYPE>, OPKIT_EMU_REJECT_MSG(MatmulImpl, OPKIT_EMU_MM_WHY));
};
}  // namespace AscendC
// CANN's "previously used matmul namespace" is AscendC itself (include/adv_api/matmul/matmul.h:404): kernels write
// matmul::Matmul<...> (ops-nn rnn/gru) and matmul::InitOutput (ops-transformer nsa_selected_attention_infer)
namespace matmul = AscendC;
// a macro in CANN; here the call of the rejected function of the same name
#define REGIST_MATMUL_OBJ(...) ::AscendC::REGIST_MATMUL_OBJ(__VA_ARGS__)
#undef OPKIT_EMU_MM_WHY
