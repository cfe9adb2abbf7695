// The kernels a device library hands to opkit's registration surface (opkit.registration.register_native):
// instead of registering them itself (TORCH_LIBRARY_IMPL), the library exports
//   extern "C" void opkit_kernel_table(opkit::KernelTable* table)   // table->add("<op>", TORCH_FN(...))
// and _opkit_torch registers each for the dispatch key the target names (the NPU target: PrivateUse1),
// in the torch::Library objects that hold every other registration of the op. Both sides are compiled
// against the same torch headers (the device library links libtorch too).
#pragma once
#include <torch/library.h>

#include <string>
#include <utility>
#include <vector>

namespace opkit {

struct KernelTable {
  std::vector<std::pair<std::string, torch::CppFunction>> kernels;

  template <class Fn>
  void add(const char* op, Fn&& fn) {
    kernels.emplace_back(op, torch::CppFunction(std::forward<Fn>(fn)));
  }
};

}  // namespace opkit

#define OPKIT_KERNEL_TABLE_SYMBOL "opkit_kernel_table"
typedef void (*opkit_kernel_table_fn)(opkit::KernelTable*);
