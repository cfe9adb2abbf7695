// opkit --check-only STAND-IN for CANN's <cann>/include/tiling/platform/platform_ascendc.h: the two
// calls opkit's generated op_host/<op>.cpp makes, with CANN's names. NOT CANN's header.
#ifndef OPKIT_STANDIN_PLATFORM_ASCENDC_H
#define OPKIT_STANDIN_PLATFORM_ASCENDC_H
#include <cstdint>
namespace platform_ascendc {
class PlatformAscendC {
 public:
  explicit PlatformAscendC(const void* platform_info);
  uint32_t GetCoreNumAiv() const;
  uint32_t GetLibApiWorkSpaceSize() const;
};
}  // namespace platform_ascendc
#endif
