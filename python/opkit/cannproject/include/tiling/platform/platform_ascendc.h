// CANN header path, served by opkit's CPU stand-in of the op_host API (opkit_cann/host.h; docs/cann.md).
#pragma once
#include <cstdio>
#include <cstring>

#include "opkit_cann/host.h"

namespace platform_ascendc {
// CANN's PlatformAscendCManager (asc-devkit 82b89a15 include/utils/tiling/platform/platform_ascendc.h:162-195): the
// process-wide PlatformAscendC a host program (a `.asc` sample's CPU-debug set-up, CANN's own tiling functions)
// asks for. The emulator models one chip, A2: GetInstance() and GetInstance("Ascend910B...") / "Ascend910_93..."
// give the Ascend910B1 profile (fe::PlatFormInfos' defaults); before the first instance exists another SoC name gives
// nullptr, as CANN does for a platform it cannot load, with a message naming it. Once one exists, every GetInstance
// returns it whatever name it is given (CANN initialises only while platformInfo is null, :164-185).
class PlatformAscendCManager {
 public:
  static PlatformAscendC* GetInstance() { return made() = true, instance(); }
  static PlatformAscendC* GetInstance(const char* customSocVersion) {
    if (made()) return instance();
    if (customSocVersion != nullptr && std::strncmp(customSocVersion, "Ascend910B", 10) != 0 &&
        std::strncmp(customSocVersion, "Ascend910_93", 12) != 0) {
      std::fprintf(stderr,
                   "opkit: PlatformAscendCManager::GetInstance(\"%s\"): the emulator models Ascend 910B (A2) only\n",
                   customSocVersion);
      return nullptr;
    }
    return made() = true, instance();
  }

 private:
  static bool& made() {
    static bool once = false;
    return once;
  }
  static PlatformAscendC* instance() {
    static fe::PlatFormInfos infos;
    static PlatformAscendC platform(&infos);
    return &platform;
  }
};
}  // namespace platform_ascendc
