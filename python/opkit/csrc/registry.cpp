// opkit._opkit_torch: the one place where an op becomes a torch op (driven by python/opkit/registration.py).
// It defines schemas and registers kernels per dispatch key in torch::Library objects it owns:
//   CPU       the emulator kernel (kernels.cpp) over the op's kernel modules
//   Meta      shapes from the op's shape rule
//   Autocast  lead-dtype casts, then the op below autocast
//   Autograd  C++: when no input needs a gradient (or grad mode is off) the op goes straight below
//             autograd; otherwise the Python autograd.Function that opkit.autograd builds runs it
//   any key   a kernel from elsewhere: a Python callable (TBE and CANN-project ops) or a device library's
//             kernel table (the NPU binding's PrivateUse1 kernels, opkit/kernel_table.h)
// Built once per torch version and shared by every op: an op build compiles only its kernel modules.
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "kernels.h"
#include "opkit/kernel_table.h"

#include <dlfcn.h>

namespace py = pybind11;

namespace opkit_rt {
namespace {

at::ScalarType scalar_type(const std::string& name) {
  static const std::map<std::string, at::ScalarType> table = {
      {"float16", at::kHalf}, {"bfloat16", at::kBFloat16}, {"float32", at::kFloat},
      {"int32", at::kInt},    {"int64", at::kLong},        {"bool", at::kBool}};
  auto it = table.find(name);
  TORCH_CHECK(it != table.end(), "opkit: dtype '", name, "' has no at::ScalarType");
  return it->second;
}

int optional_dtype(const py::handle& v) {
  return v.is_none() ? -1 : static_cast<int>(scalar_type(v.cast<std::string>()));
}

AttrType attr_type(const std::string& t) {
  if (t == "float") return AttrType::Float;
  if (t == "int") return AttrType::Int;
  if (t == "bool") return AttrType::Bool;
  TORCH_CHECK(t == "str", "opkit: attr type '", t, "'");
  return AttrType::Str;
}

c10::IValue attr_value(const py::handle& v, AttrType t) {
  switch (t) {
    case AttrType::Float: return v.cast<double>();
    case AttrType::Int: return v.cast<int64_t>();
    case AttrType::Bool: return v.cast<bool>();
    case AttrType::Str: return v.cast<std::string>();
  }
  return {};
}

// The description opkit.registration.describe() builds from the op's lowering (key names: that function).
std::shared_ptr<OpDesc> parse(const py::dict& p) {
  auto d = std::make_shared<OpDesc>();
  d->snake = p["snake"].cast<std::string>();
  d->label = "opkit." + d->snake;
  d->tiling_func = p["tiling_func"].cast<std::string>();
  d->dtypes_text = p["dtypes_text"].cast<std::string>();
  d->module_dir = p["module_dir"].cast<std::string>();
  d->dim_attr = p["dim_attr"].cast<int>();
  d->num_vars = p["num_vars"].cast<int>();
  d->num_gm_args = p["num_gm_args"].cast<int>();
  for (const auto& h : p["inputs"]) {
    py::dict i = h.cast<py::dict>();
    d->inputs.push_back({i["name"].cast<std::string>(), i["shape"].cast<std::string>(), i["ellipsis"].cast<bool>(),
                         i["fixed_rank"].cast<int64_t>(), i["moves"].cast<bool>()});
  }
  for (const auto& h : p["outputs"]) {
    py::dict o = h.cast<py::dict>();
    d->outputs.push_back({o["name"].cast<std::string>(), optional_dtype(o["dtype"]), optional_dtype(o["kernel_dtype"]),
                          o["zero"].cast<bool>(), o["like"].cast<int>(), o["reduce_src"].cast<int>(),
                          o["keep_attr"].cast<int>()});
  }
  for (const auto& h : p["attrs"]) {
    py::dict a = h.cast<py::dict>();
    AttrDesc ad;
    ad.name = a["name"].cast<std::string>();
    ad.type = attr_type(a["type"].cast<std::string>());
    ad.is_dim = a["is_dim"].cast<bool>();
    for (const auto& c : a["choices"]) ad.choices.push_back(attr_value(c, ad.type));
    ad.choices_text = a["choices_text"].cast<std::string>();
    d->attrs.push_back(std::move(ad));
  }
  static const std::map<std::string, DimCheck::Kind> kinds = {
      {"fixed", DimCheck::Fixed}, {"bind", DimCheck::Bind}, {"same", DimCheck::Same}, {"batch", DimCheck::Batch}};
  for (const auto& h : p["checks"]) {
    py::dict c = h.cast<py::dict>();
    d->checks.push_back({kinds.at(c["kind"].cast<std::string>()), c["input"].cast<int>(), c["index"].cast<int64_t>(),
                         c["value"].cast<int64_t>(), c["var"].cast<int>(), c["owner"].cast<int>(),
                         c["label"].cast<std::string>()});
  }
  for (const auto& h : p["variants"]) {
    py::dict v = h.cast<py::dict>();
    d->variants.push_back({scalar_type(v["dtype"].cast<std::string>()), v["tag"].cast<std::string>(),
                           v["naive_on_demand"].cast<bool>()});
  }
  d->modules.reset(new std::atomic<const Module*>[2 * d->variants.size()]);
  for (size_t i = 0; i < 2 * d->variants.size(); ++i) d->modules[i].store(nullptr);
  return d;
}

// torch::Library objects live as long as the process: their registrations must outlive every call.
torch::Library& library(torch::Library::Kind kind, const std::string& ns, const std::string& key) {
  static std::map<std::tuple<int, std::string, std::string>, torch::Library*> libs;
  auto k = std::make_tuple(static_cast<int>(kind), ns, key);
  auto it = libs.find(k);
  if (it != libs.end()) return *it->second;
  std::optional<c10::DispatchKey> dk;
  if (!key.empty()) dk = c10::parseDispatchKey(key);
  auto* lib = new torch::Library(kind, ns, dk, __FILE__, __LINE__);
  libs.emplace(k, lib);
  return *lib;
}

py::object to_py(const c10::IValue& v) {
  if (v.isNone()) return py::none();
  if (v.isTensor()) return py::cast(v.toTensor());
  if (v.isDouble()) return py::float_(v.toDouble());
  if (v.isBool()) return py::bool_(v.toBool());
  if (v.isInt()) return py::int_(v.toInt());
  if (v.isString()) return py::str(v.toStringRef());
  TORCH_CHECK(false, "opkit: cannot pass ", v.tagKind(), " to Python");
}

// A Python callable as a boxed kernel: arguments in, tensor or tuple of tensors out.
class PythonKernel final : public c10::OperatorKernel {
 public:
  PythonKernel(py::object fn, size_t n_args, size_t n_outputs)
      : fn_(fn.release().ptr()), n_args_(n_args), n_out_(n_outputs) {}   // never released: lives with the registration

  void call(torch::jit::Stack* stack) const {
    py::gil_scoped_acquire gil;
    py::tuple args(n_args_);
    for (size_t i = 0; i < n_args_; ++i) args[i] = to_py((*stack)[stack->size() - n_args_ + i]);
    py::object r = py::reinterpret_borrow<py::object>(fn_)(*args);
    torch::jit::drop(*stack, n_args_);
    if (n_out_ == 1 && !py::isinstance<py::tuple>(r) && !py::isinstance<py::list>(r)) {
      stack->emplace_back(r.cast<at::Tensor>());
      return;
    }
    auto seq = r.cast<py::sequence>();
    TORCH_CHECK(seq.size() == n_out_, "opkit: a Python kernel returned ", seq.size(), " values; expected ", n_out_);
    for (const auto& o : seq) stack->emplace_back(o.cast<at::Tensor>());
  }

  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack) { call(stack); }

 private:
  PyObject* fn_;
  size_t n_args_, n_out_;
};

class AutogradKernel final : public c10::OperatorKernel {
 public:
  AutogradKernel(std::shared_ptr<OpDesc> desc, py::object with_grad)
      : d_(std::move(desc)),
        with_grad_(std::move(with_grad), d_->inputs.size() + d_->attrs.size(), d_->outputs.size()) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    const size_t n_in = d_->inputs.size(), n_args = n_in + d_->attrs.size();
    bool needs_grad = false;
    if (at::GradMode::is_enabled()) {
      for (size_t i = 0; i < n_in && !needs_grad; ++i) {
        const c10::IValue& v = (*stack)[stack->size() - n_args + i];
        needs_grad = v.isTensor() && v.toTensor().requires_grad();
      }
    }
    if (!needs_grad) {   // the common case (inference, patched models under no_grad): no Python at all
      at::AutoDispatchBelowADInplaceOrView guard;
      op.redispatchBoxed(ks & c10::after_ADInplaceOrView_keyset, stack);
      return;
    }
    with_grad_.call(stack);
  }

 private:
  std::shared_ptr<OpDesc> d_;
  PythonKernel with_grad_;
};

}  // namespace
}  // namespace opkit_rt

PYBIND11_MODULE(_opkit_torch, m) {
  using namespace opkit_rt;
  m.doc() = "opkit's torch-side library: schemas and kernels of every opkit op (python/opkit/registration.py)";

  py::class_<OpDesc, std::shared_ptr<OpDesc>>(m, "OpDesc").def(py::init(&parse)).def_property_readonly(
      "snake", [](const OpDesc& d) { return d.snake; });

  m.def("define", [](const std::string& ns, const std::string& schema) {
    library(torch::Library::FRAGMENT, ns, "").def(schema.c_str());
  });

  // kind: "emulator" | "emulator_naive" | "meta" | "autocast"
  m.def("impl", [](const std::string& ns, const std::string& key, const std::string& kind,
                   const std::shared_ptr<OpDesc>& d) {
    torch::CppFunction fn = [&]() {
      if (kind == "emulator" || kind == "emulator_naive")
        return torch::CppFunction::makeFromBoxedFunctor(std::make_unique<EmulatorKernel>(d, kind == "emulator_naive"));
      if (kind == "meta") return torch::CppFunction::makeFromBoxedFunctor(std::make_unique<MetaKernel>(d));
      TORCH_CHECK(kind == "autocast", "opkit: unknown kernel kind '", kind, "'");
      return torch::CppFunction::makeFromBoxedFunctor(std::make_unique<AutocastKernel>(d));
    }();
    library(torch::Library::IMPL, ns, key).impl(d->snake.c_str(), std::move(fn));
  });

  m.def("impl_autograd", [](const std::string& ns, const std::shared_ptr<OpDesc>& d, py::object with_grad) {
    library(torch::Library::IMPL, ns, "Autograd")
        .impl(d->snake.c_str(), torch::CppFunction::makeFromBoxedFunctor(
                                    std::make_unique<AutogradKernel>(d, std::move(with_grad))));
  });

  m.def("impl_python", [](const std::string& ns, const std::string& key, const std::string& name, py::object fn,
                          size_t n_args, size_t n_outputs) {
    library(torch::Library::IMPL, ns, key)
        .impl(name.c_str(), torch::CppFunction::makeFromBoxedFunctor(
                                std::make_unique<PythonKernel>(std::move(fn), n_args, n_outputs)));
  });

  // A device library's kernels (opkit/kernel_table.h) for one dispatch key; returns the op names registered.
  m.def("impl_library", [](const std::string& ns, const std::string& key, const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    TORCH_CHECK(handle != nullptr, "opkit: cannot load ", path, ": ", dlerror());
    auto table_fn = reinterpret_cast<opkit_kernel_table_fn>(dlsym(handle, OPKIT_KERNEL_TABLE_SYMBOL));
    TORCH_CHECK(table_fn != nullptr, "opkit: ", path, " does not export " OPKIT_KERNEL_TABLE_SYMBOL
                " (built by an older opkit: rebuild it)");
    opkit::KernelTable table;
    table_fn(&table);
    std::vector<std::string> names;
    for (auto& [name, fn] : table.kernels) {
      library(torch::Library::IMPL, ns, key).impl(name.c_str(), std::move(fn));
      names.push_back(name);
    }
    return names;
  });

  // fn(snake, module_dir, file): makes an on-demand kernel module current or raises (opkit.loader sets it).
  m.def("set_module_builder", [](py::object fn) {
    if (fn.is_none()) return set_module_builder(nullptr);
    // kept for the life of the process (no Python object is destroyed at exit without the GIL)
    auto* keep = new py::object(std::move(fn));
    set_module_builder([keep](const std::string& snake, const std::string& dir, const std::string& file) {
      py::gil_scoped_acquire gil;
      try {
        (*keep)(snake, dir, file);
      } catch (py::error_already_set& e) {
        // the exception's type and text, not e.what(): that appends pybind's flattened Python traceback
        const std::string why = py::str(e.type().attr("__name__")).cast<std::string>() + ": " +
                                py::str(e.value()).cast<std::string>();
        TORCH_CHECK(false, "opkit.", snake, ": ", file, " is built on first use, and that failed: ", why);
      }
    });
  });

  m.def("last_launch", []() {
    const opkit_launch_result& r = last_launch();
    py::dict s;
    s["gm_read_bytes"] = r.stats.gm_read_bytes;
    s["gm_write_bytes"] = r.stats.gm_write_bytes;
    s["vector_elems"] = r.stats.vector_elems;
    s["vector_repeats"] = r.stats.vector_repeats;
    s["ub_high_water"] = r.stats.ub_high_water;
    s["max_block_gm_bytes"] = r.stats.max_block_gm_bytes;
    s["max_block_vector_repeats"] = r.stats.max_block_vector_repeats;
    s["blocks"] = r.stats.blocks;
    s["checked"] = last_launch_checked();
    s["staged_inputs"] = last_launch_staged();          // a bit per input run from a padded copy
    s["copied_back_inputs"] = last_launch_copied_back();  // of those, the ones copied back (written)
    return s;
  });
}
