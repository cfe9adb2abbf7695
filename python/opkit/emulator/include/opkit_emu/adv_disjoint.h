// Outputs of an advanced API that may not share UB, BatchNorm's and GroupNorm's three (api-argument). Two checks:
//  - CANN's own kernel check, TensorReuseLoopCheck (asc-devkit 82b89a15 impl/adv_api/detail/api_check/kernel_check/
//    basic_check/multiple_tensor_check.h:71-97, listed by batchnorm_check_common.h:91-92 and
//    groupnorm_check_common.h:62-63): two tensors with the same start address and the same GetSize() bytes;
//  - the emulator's own: any other overlap of the bytes the call writes (a partial overlap, or the same start with
//    other sizes) -- CANN lets it through, but the device's result then depends on its write order.
#pragma once
#include <cstdint>
#include <initializer_list>

#include "opkit_emu/runtime.h"
#include "opkit_emu/tensor.h"

namespace opkit_emu {
struct UsedRange {
  const uint8_t* addr;
  uint64_t bytes;         // what the call writes
  uint64_t tensor_bytes;  // the tensor's GetSize() x sizeof(T), what CANN's check compares
  const char* name;
};
template <class T>
inline UsedRange used_range(const AscendC::LocalTensor<T>& t, uint64_t elems, const char* name) {
  return {reinterpret_cast<const uint8_t*>(t.data()), elems * sizeof(T), uint64_t(t.GetSize()) * sizeof(T), name};
}
inline void adv_check_disjoint(const char* api, SrcLoc loc, std::initializer_list<UsedRange> rs) {
  for (auto a = rs.begin(); a != rs.end(); ++a)
    for (auto b = a + 1; b != rs.end(); ++b) {
      if (a->addr == b->addr && a->tensor_bytes == b->tensor_bytes)
        fail("api-argument", api, loc,
             strf("%s and %s are the same tensor (start and %llu bytes): CANN's kernel check refuses their reuse "
                  "(TensorReuseLoopCheck, multiple_tensor_check.h:71-97)", a->name, b->name,
                  static_cast<unsigned long long>(a->tensor_bytes)));
      if (a->bytes && b->bytes && a->addr < b->addr + b->bytes && b->addr < a->addr + a->bytes)
        fail("api-argument", api, loc,
             strf("%s and %s overlap (writing %llu and %llu bytes): a check the emulator adds -- CANN's own refuses "
                  "only the same tensor twice, but the device's result then depends on its write order",
                  a->name, b->name, static_cast<unsigned long long>(a->bytes),
                  static_cast<unsigned long long>(b->bytes)));
    }
}
}  // namespace opkit_emu
