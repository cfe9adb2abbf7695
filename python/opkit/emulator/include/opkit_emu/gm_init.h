// InitOutput(gm, size, value): fills `size` elements of GM with `value` (deprecated in CANN in favour of the
// advanced-API Fill, still used by many op kernels to zero an output before atomic accumulation).
// CANN's implementation (impl/basic_api/kernel_operator_common_intf_impl.h, mirror-cann/asc-devkit 82b89a15)
// duplicates `value` into the UB left after the TPipe's buffers (PopStackBuffer), then writes it out with
// DataCopyPad in bursts on MTE3, so:
//  - it needs a TPipe (GetTPipePtr()->FetchEventID): without one the kernel is broken (queue-protocol);
//  - the element types are Duplicate's; any `size` (the tail goes out with DataCopyPad);
//  - the writes are ordinary UB->GM copies: under SetAtomicAdd they add, as every copy does (datacopy.h).
// The UB it borrows is outside every tensor the kernel holds, so it touches nothing a rule tracks.
#pragma once
#include <algorithm>
#include <vector>

#include "opkit_emu/datacopy.h"
#include "opkit_emu/vector.h"

namespace AscendC {

template <typename T>
void InitOutput(GlobalTensor<T> gmWorkspaceAddr, uint32_t size, T value = 0, OPKIT_LOC) {
  static_assert(opkit_emu::is_dup_t<T>, "opkit emulator: InitOutput fills with Duplicate, which does not support "
                                        "this element type on this chip");
  if (!opkit_emu::ctx().pipe)
    opkit_emu::fail("queue-protocol", "InitOutput", loc,
                    "InitOutput needs a TPipe (it fills from the UB after the TPipe's buffers); create one first");
  if (size == 0) return;
  gmWorkspaceAddr.check(0, size, "InitOutput", loc);
  const std::vector<T> fill(size, value);
  uint8_t* const g = reinterpret_cast<uint8_t*>(gmWorkspaceAddr.GetPhyAddr());
  const uint64_t bytes = static_cast<uint64_t>(size) * sizeof(T);
  opkit_emu::gm_store(g, reinterpret_cast<const uint8_t*>(fill.data()), static_cast<size_t>(bytes));
  // a defined value over padding garbage (gm_pad.h) makes it defined, as a DataCopyPad of defined UB does; under
  // SetAtomicAdd it adds to the garbage, which stays garbage
  if (opkit_emu::ctx().atomic_dtype < 0)
    opkit_emu::gm_pad_scalar(g, static_cast<size_t>(bytes), -1, true, "InitOutput", loc);
}

// The advanced API's InitGlobalMemory (and its newer name Fill), asc-devkit include/adv_api/utils/
// init_global_memory.h + impl/adv_api/detail/utils/init_global_memory/init_global_memory_v220_impl.h:35-70 (82b89a15):
// the same UB-stack Duplicate + DataCopyPad bursts on MTE3 as InitOutput, with a 64-bit size.
template <typename T>
void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value, OPKIT_LOC) {
  if (size > 0xffffffffull)
    opkit_emu::fail("gm-bounds", "InitGlobalMemory", loc, "size " + std::to_string(size) + " elements");
  InitOutput(gmWorkspaceAddr, static_cast<uint32_t>(size), value, loc);
}
template <typename T>
void Fill(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value, OPKIT_LOC) {
  InitGlobalMemory(gmWorkspaceAddr, size, value, loc);
}

}  // namespace AscendC
