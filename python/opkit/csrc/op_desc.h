// What the torch-side library knows about one op: the lowering of its op.yaml (python/opkit/lowering.py),
// handed over by opkit.registration at load time. Nothing here is generated per op: every op runs
// through the same kernels (kernels.cpp), which read this description.
#pragma once
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <vector>

#include "opkit/launch_abi.h"
#include "opkit/tiling.h"

namespace opkit_rt {

enum class AttrType { Float, Int, Bool, Str };

struct InputDesc {
  std::string name;
  std::string shape;      // op.yaml tokens, for messages: "..., C"
  bool ellipsis = false;  // shape starts with "..."
  int64_t fixed_rank = 0;
  bool moves = false;     // moved with the `dim` attr's dim (the kernel works on the last dim)
};

struct OutputDesc {
  std::string name;
  int dtype = -1;          // at::ScalarType returned; -1: the lead input's
  int kernel_dtype = -1;   // at::ScalarType the kernel writes; -1: same as dtype
  bool zero = false;       // allocated zero-filled (kernels may accumulate)
  int like = -1;           // input index: same shape as that input's kernel view; -1: a reduce
  int reduce_src = -1;     // input index the reduce runs over
  int keep_attr = -1;      // attr index of keepdim, -1: none
};

struct AttrDesc {
  std::string name;
  AttrType type = AttrType::Float;
  bool is_dim = false;                 // role: dim (moved last; tiling sees -1)
  std::vector<c10::IValue> choices;    // allowed values (empty: any)
  std::string choices_text;
};

struct DimCheck {
  enum Kind { Fixed, Bind, Same, Batch } kind = Fixed;
  int input = 0;
  int64_t index = 0;
  int64_t value = 0;   // Fixed: the size; Batch: the owner's fixed rank
  int var = -1;        // Bind/Same: slot of the named dim
  int owner = -1;      // Same/Batch: input index that bound it
  std::string label;   // the named dim, for messages
};

struct Variant {
  at::ScalarType dtype;
  std::string tag;     // kernel_<tag>[_naive].so
  // Its naive module is built on first use (its lead dtype is the op's compute dtype, so `opkit build` skips
  // it): before it is first loaded, the module builder (registry.cpp set_module_builder) makes it current.
  bool naive_on_demand = false;
};

// A loaded kernel module (kernel_<tag>[_naive].so): its launch entry and its tiling.
struct Module {
  opkit_kernel_launch_fn launch = nullptr;
  unsigned long (*tiling_size)() = nullptr;
  int (*tiling_run)(opkit::TilingContext*, void*, char*, unsigned long) = nullptr;
  // Launches (block_dim, tiling key, GM sizes, tiling bytes) that passed every rule once: later launches of the
  // same key run fast (OPKIT_LAUNCH_FAST). docs/emulator.md "Checked once, then fast".
  // Its optional export (launch_abi.h): what the thread's last checked launch wrote and whose padding it touched.
  opkit_kernel_last_marks_fn last_marks = nullptr;
  // Per key: what its checked launch did, a bit per GM argument (the torch binding's input staging, kernels.cpp).
  struct Marks { uint64_t written = ~uint64_t(0), pad_touched = ~uint64_t(0); };
  mutable std::mutex checked_mu;
  mutable std::unordered_map<std::string, Marks> checked;
};

struct OpDesc {
  std::string snake;
  std::string label;          // "opkit.<snake>", the prefix of every message
  std::string tiling_func;    // for messages
  std::string dtypes_text;    // "float16, bfloat16, float32"
  std::string module_dir;     // folder of kernel_<tag>[_naive].so
  std::vector<InputDesc> inputs;
  std::vector<OutputDesc> outputs;
  std::vector<AttrDesc> attrs;
  std::vector<DimCheck> checks;
  std::vector<Variant> variants;
  int dim_attr = -1;          // attr index of the `dim` role, -1: none
  int num_vars = 0;           // named-dim slots
  int num_gm_args = 0;        // inputs + outputs + workspace + tiling

  // Modules are dlopen'ed on first use, one per variant and flavour (opkit / naive).
  mutable std::mutex mu;
  mutable std::unique_ptr<std::atomic<const Module*>[]> modules;   // 2 * variants.size(), null until loaded
};

}  // namespace opkit_rt
