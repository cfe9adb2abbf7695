// The generic kernels every emulator op registers (boxed: they read the op's description, not a
// generated signature). registry.cpp registers them; kernels.cpp implements them.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <functional>
#include <memory>
#include <string>

#include "op_desc.h"

namespace opkit_rt {

// CPU: checks, casts to the lead dtype, the `dim` attr's dim moved last, outputs allocated, the op's
// tiling run in C++ (from the kernel module), the kernel launched on the emulator, dims moved back.
class EmulatorKernel final : public c10::OperatorKernel {
 public:
  EmulatorKernel(std::shared_ptr<OpDesc> desc, bool naive) : d_(std::move(desc)), naive_(naive) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);

 private:
  std::shared_ptr<OpDesc> d_;
  bool naive_;
};

// Meta: shapes and dtypes from the shape rule, SymInt-aware (torch.compile with dynamic shapes).
class MetaKernel final : public c10::OperatorKernel {
 public:
  explicit MetaKernel(std::shared_ptr<OpDesc> desc) : d_(std::move(desc)) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);

 private:
  std::shared_ptr<OpDesc> d_;
};

// Autocast (CPU and PrivateUse1): floating inputs take the lead input's dtype (never downcast below it),
// the kernel computes in FP32; then the op again below autocast.
class AutocastKernel final : public c10::OperatorKernel {
 public:
  explicit AutocastKernel(std::shared_ptr<OpDesc> desc) : d_(std::move(desc)) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);

 private:
  std::shared_ptr<OpDesc> d_;
};

// Validates the argument checks of the op (dtype of the lead input, ranks, attr choices); shared by
// the CPU and Meta kernels so both reject the same calls with the same message.
void check_args(const OpDesc& d, const c10::IValue* args);

// This thread's last emulator launch (_opkit_torch.last_launch() returns its counters).
const opkit_launch_result& last_launch();
// Whether it ran every rule (false: a fast launch of a key already checked, OPKIT_EMU_CHECKS).
bool last_launch_checked();
// Which of its inputs ran from a padded copy, and which of those were copied back (a bit per input).
uint64_t last_launch_staged();
uint64_t last_launch_copied_back();

// Makes an on-demand module current before its first load in a process (builds it, or throws saying why not):
// (op snake name, module folder, file name). Set once by opkit.loader; unset: the file is loaded as it is.
using ModuleBuilder = std::function<void(const std::string&, const std::string&, const std::string&)>;
void set_module_builder(ModuleBuilder builder);

}  // namespace opkit_rt
