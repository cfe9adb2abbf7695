// DumpTensor / DumpAccChkPoint (调试接口/DumpTensor.md, DumpAccChkPoint.md; include/basic_api/
// kernel_operator_dump_tensor_intf.h, asc-devkit 82b89a15): print a tensor's first dumpSize elements with the
// caller's desc number. CANN's device build writes them to a dump workspace the host prints after the launch; its CPU
// build prints them at once, as here (host stdout, silenced like printf by -DASCENDC_DUMP=0). The print format is
// opkit's own (one header line, then the values); dumpSize past the tensor is clamped to it.
#pragma once
#include <cstdio>

#include "opkit_emu/shape_info.h"
#include "opkit_emu/tensor.h"

namespace opkit_emu {
template <class T>
void dump_values(const char* what, uint32_t desc, const T* p, uint32_t n, uint32_t size, uint32_t offset = 0) {
#if !(defined(ASCENDC_DUMP) && ASCENDC_DUMP == 0)
  n = std::min(n, size > offset ? size - offset : 0u);
  std::printf("%s: desc=%u, offset=%u, count=%u\n[", what, desc, offset, n);
  for (uint32_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point<T>::value || std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value)
      std::printf(i ? ", %g" : "%g", static_cast<double>(to_f(p[offset + i])));
    else
      std::printf(i ? ", %lld" : "%lld", static_cast<long long>(p[offset + i]));
  }
  std::printf("]\n");
#else
  (void)what, (void)desc, (void)p, (void)n, (void)size, (void)offset;
#endif
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T>
void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
  opkit_emu::dump_values("DumpTensor", desc, tensor.data(), dumpSize, tensor.GetSize());
}
template <typename T>
void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, OPKIT_LOC) {
  tensor.check(0, dumpSize, "DumpTensor", loc);  // GM outside the launch's buffers is gm-bounds, as for a copy
  opkit_emu::dump_values("DumpTensor", desc, tensor.GetPhyAddr(), dumpSize, dumpSize);
}
template <typename T>
void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, const ShapeInfo&) {
  DumpTensor(tensor, desc, dumpSize);
}
template <typename T>
void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize, const ShapeInfo&, OPKIT_LOC) {
  DumpTensor(tensor, desc, dumpSize, loc);
}
template <typename T>
void DumpAccChkPoint(const LocalTensor<T>& tensor, uint32_t index, uint32_t countOff, uint32_t dumpSize) {
  opkit_emu::dump_values("DumpAccChkPoint", index, tensor.data(), dumpSize, tensor.GetSize(), countOff);
}
template <typename T>
void DumpAccChkPoint(const GlobalTensor<T>& tensor, uint32_t index, uint32_t countOff, uint32_t dumpSize, OPKIT_LOC) {
  tensor.check(countOff, dumpSize, "DumpAccChkPoint", loc);
  opkit_emu::dump_values("DumpAccChkPoint", index, tensor.GetPhyAddr(), dumpSize, countOff + dumpSize, countOff);
}
}  // namespace AscendC
