// CANN header path, served by opkit's CPU stand-in of the op_host API (opkit_cann/host.h; docs/cann.md).
#pragma once
#include "opkit_cann/host.h"

#include <cstdio>
#include <cstring>
namespace platform_ascendc {
// The platform a standalone host program asks for (asc-devkit 82b89a15 include/utils/tiling/platform/
// platform_ascendc.h: PlatformAscendCManager::GetInstance() / GetInstance(customSocVersion)). The emulator runs one
// chip, the A2 (910B / 910_93): GetInstance() is that chip, and a named SoC not A2 gets nullptr, as CANN's does for
// a version it cannot load, with the reason on stderr.
class PlatformAscendCManager {
 public:
  static PlatformAscendC* GetInstance() { return GetInstance("Ascend910B1"); }
  static PlatformAscendC* GetInstance(const char* customSocVersion) {
    const char* s = customSocVersion ? customSocVersion : "";
    if (std::strncmp(s, "Ascend910B", 10) != 0 && std::strncmp(s, "Ascend910_93", 12) != 0) {
      std::fprintf(stderr, "[PlatformAscendCManager::GetInstance] SoC \"%s\": the emulator runs the A2 (Ascend910B*) "
                           "only; returning nullptr\n", s);
      return nullptr;
    }
    static fe::PlatFormInfos infos;  // the defaults are the 910B1 profile
    static PlatformAscendC platform(&infos);
    return &platform;
  }
};
}  // namespace platform_ascendc
