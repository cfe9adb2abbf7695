// CANN's kernel check MultipleTensorCheckFuncBasicClass::TensorReuseVerifyingParameters (asc-devkit 82b89a15
// impl/adv_api/detail/api_check/kernel_check/...): the tensors it lists may not share UB bytes -- BatchNorm's and
// GroupNorm's three outputs (batchnorm_check_common.h:91-92, groupnorm_check_common.h:62-63). api-argument here.
#pragma once
#include <cstdint>
#include <initializer_list>

#include "opkit_emu/runtime.h"
#include "opkit_emu/tensor.h"

namespace opkit_emu {
struct UsedRange {
  const uint8_t* addr;
  uint64_t bytes;
  const char* name;
};
inline void adv_check_disjoint(const char* api, SrcLoc loc, std::initializer_list<UsedRange> rs) {
  for (auto a = rs.begin(); a != rs.end(); ++a)
    for (auto b = a + 1; b != rs.end(); ++b)
      if (a->bytes && b->bytes && a->addr < b->addr + b->bytes && b->addr < a->addr + a->bytes)
        fail("api-argument", api, loc,
             strf("%s and %s overlap (bytes %llu and %llu long): CANN's kernel check refuses outputs that share UB "
                  "(TensorReuseVerifyingParameters)", a->name, b->name, static_cast<unsigned long long>(a->bytes),
                  static_cast<unsigned long long>(b->bytes)));
}
}  // namespace opkit_emu
