// The generic emulator, Meta and Autocast kernels (kernels.h). One compiled copy serves every op: the
// per-op facts come from the OpDesc that opkit.registration built from the op's lowering.
#include "kernels.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/WrapDimMinimal.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/accumulate.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace opkit_rt {
namespace {

thread_local opkit_launch_result t_last{};
thread_local bool t_last_checked = true;
thread_local uint64_t t_last_staged = 0, t_last_copied = 0;   // a bit per input
// A bit per GM argument in a uint64_t (these, Module::Marks, opkit_kernel_last_marks): past 64 the shifts are undefined.
static_assert(OPKIT_MAX_GM_ARGS <= 64, "opkit: a GM argument's bit in a uint64_t needs OPKIT_MAX_GM_ARGS <= 64");

opkit::DType opkit_dtype(const OpDesc& d, at::ScalarType t) {
  switch (t) {
    case at::kHalf: return opkit::DType::Float16;
    case at::kBFloat16: return opkit::DType::BFloat16;
    case at::kFloat: return opkit::DType::Float32;
    case at::kInt: return opkit::DType::Int32;
    case at::kLong: return opkit::DType::Int64;
    case at::kBool: return opkit::DType::Bool;
    case at::kChar: return opkit::DType::Int8;
    case at::kByte: return opkit::DType::UInt8;
    default: TORCH_CHECK(false, d.label, ": dtype ", t, " has no opkit::DType");
  }
}

opkit::TensorInfo info(const OpDesc& d, const at::Tensor& t) {
  return opkit::TensorInfo{std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), opkit_dtype(d, t.scalar_type())};
}

int variant_of(const OpDesc& d, at::ScalarType t) {
  for (size_t i = 0; i < d.variants.size(); ++i)
    if (d.variants[i].dtype == t) return static_cast<int>(i);
  return -1;
}

template <class T>
T sym(void* handle, const char* name) {
  return reinterpret_cast<T>(dlsym(handle, name));
}

std::mutex g_builder_mu;
std::shared_ptr<const ModuleBuilder> g_builder;   // set_module_builder's

// kernel_<tag>[_naive].so of one variant, dlopen'ed RTLD_LOCAL once (dtype variants of one kernel hold
// classes of the same name: each module keeps its own).
const Module& module(const OpDesc& d, int variant, bool naive) {
  const size_t slot = 2 * static_cast<size_t>(variant) + (naive ? 1 : 0);
  const Module* m = d.modules[slot].load(std::memory_order_acquire);
  if (m != nullptr) return *m;
  const std::string file = "kernel_" + d.variants[variant].tag + (naive ? "_naive" : "") + ".so";
  const std::string path = d.module_dir + "/" + file;
  if (naive && d.variants[variant].naive_on_demand) {
    // Built (or found current) before the lock: the builder runs Python, and a thread holding the GIL may be
    // waiting for d.mu. Concurrent callers build once (the build folder's file lock; then Ninja has no work).
    std::shared_ptr<const ModuleBuilder> b;
    {
      std::lock_guard<std::mutex> g(g_builder_mu);
      b = g_builder;
    }
    if (b) (*b)(d.snake, d.module_dir, file);
  }
  std::lock_guard<std::mutex> lock(d.mu);
  m = d.modules[slot].load(std::memory_order_relaxed);
  if (m != nullptr) return *m;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(handle != nullptr, d.label, ": cannot load kernel module ", path, ": ", dlerror(), " (run `opkit build`)");
  auto* loaded = new Module();   // kept for the life of the process, as the module is
  loaded->launch = sym<opkit_kernel_launch_fn>(handle, OPKIT_KERNEL_LAUNCH_SYMBOL);
  loaded->tiling_size = sym<unsigned long (*)()>(handle, OPKIT_TILING_SIZE_SYMBOL);
  loaded->tiling_run = sym<int (*)(opkit::TilingContext*, void*, char*, unsigned long)>(handle, OPKIT_TILING_RUN_SYMBOL);
  loaded->last_marks = sym<opkit_kernel_last_marks_fn>(handle, OPKIT_KERNEL_LAST_MARKS_SYMBOL);   // optional
  TORCH_CHECK(loaded->launch && loaded->tiling_size && loaded->tiling_run, d.label, ": ", path,
              " does not export " OPKIT_KERNEL_LAUNCH_SYMBOL ", " OPKIT_TILING_SIZE_SYMBOL " and " OPKIT_TILING_RUN_SYMBOL
              " (built by an older opkit: run `opkit build`)");
  d.modules[slot].store(loaded, std::memory_order_release);
  return *loaded;
}

bool attr_matches(const c10::IValue& v, const c10::IValue& choice, AttrType t) {
  switch (t) {
    case AttrType::Float: return v.toDouble() == choice.toDouble();
    case AttrType::Int: return v.toInt() == choice.toInt();
    case AttrType::Bool: return v.toBool() == choice.toBool();
    case AttrType::Str: return v.toStringRef() == choice.toStringRef();
  }
  return false;
}

std::string attr_text(const c10::IValue& v) {
  if (v.isString()) return v.toStringRef();
  std::ostringstream s;
  s << v;
  return s.str();
}

bool keepdim(const OpDesc& d, const OutputDesc& o, const c10::IValue* attrs) {
  return o.keep_attr >= 0 && attrs[o.keep_attr].toBool();
}

at::ScalarType final_dtype(const OutputDesc& o, at::ScalarType lead) {
  return o.dtype >= 0 ? static_cast<at::ScalarType>(o.dtype) : lead;
}

at::ScalarType kernel_dtype(const OutputDesc& o, at::ScalarType lead) {
  return o.kernel_dtype >= 0 ? static_cast<at::ScalarType>(o.kernel_dtype) : final_dtype(o, lead);
}

at::Tensor as_kernel_input(const at::Tensor& t, at::ScalarType dtype) {
  return (t.scalar_type() == dtype ? t : t.to(dtype)).contiguous();
}

// OPKIT_EMU_CHECKS: "once" (default) checks the first launch of each key and runs the same key fast after it;
// "always" checks every launch (opkit's harness); "fast" skips the checks on every launch and fills fresh UB
// with another byte than a checked launch (the harness's proof that a fast launch gives the checked launch's
// bytes, uninitialised UB included; never a user setting).
enum class CheckMode { Once, Always, Fast };
CheckMode check_mode() {
  const char* e = std::getenv("OPKIT_EMU_CHECKS");
  if (e == nullptr || !*e || std::strcmp(e, "once") == 0) return CheckMode::Once;
  if (std::strcmp(e, "always") == 0) return CheckMode::Always;
  if (std::strcmp(e, "fast") == 0) return CheckMode::Fast;
  TORCH_CHECK(false, "OPKIT_EMU_CHECKS is '", e, "'; expected once, always or fast");
}

// What makes two launches of one module the same for the rules: blocks, tiling key, every GM size and data extent,
// and the tiling struct's bytes (the shape, the attributes and the tiling function's choices all land there). The
// harness passes every data extent equal to its buffer, but the key stays right for any caller of the ABI.
std::string launch_key(const opkit_launch_args& a, const unsigned char* td, size_t td_size) {
  std::string k;
  k.reserve(12 + 16 * a.num_args + td_size);
  k.append(reinterpret_cast<const char*>(&a.block_dim), sizeof a.block_dim);
  k.append(reinterpret_cast<const char*>(&a.tiling_key), sizeof a.tiling_key);
  k.append(reinterpret_cast<const char*>(a.arg_bytes), sizeof(uint64_t) * a.num_args);
  k.append(reinterpret_cast<const char*>(a.arg_data_bytes), sizeof(uint64_t) * a.num_args);
  k.append(reinterpret_cast<const char*>(td), td_size);
  return k;
}

// The device's padding (docs/emulator.md "Data extent", torch binding). torch_npu's caching allocator gives a tensor
// of n bytes a block of n plus its pad size (32 on 910B) rounded up to 512 (Ascend/pytorch 9e73e708
// torch_npu/csrc/core/npu/NPUCachingAllocator.cpp `round_size` :2202-2213, `AddPadSize` :161-170, kMinBlockSize :97;
// a reused cached block may be longer still: this is the least it has). The bytes past n are nobody's data: a
// kernel's tail rounded up into them is harmless on the device, garbage when read.
uint64_t device_block_bytes(uint64_t n) { return (n + 32 + 511) / 512 * 512; }

// A tensor owns its block when its bytes are all of its storage from the storage's first byte: a fresh tensor (the
// binding's outputs, a converted or made-contiguous input) or a caller's tensor that is not a view. The block's padding
// then follows its bytes. A view into a larger storage (a slice, torch.split / chunk, a storage offset) is followed by
// the storage's other bytes, another tensor's on the device, so it keeps exactly its bytes (gm-bounds past them).
bool owns_block(const at::Tensor& t) {
  return t.nbytes() > 0 && t.storage_offset() == 0 && t.storage().nbytes() == t.nbytes();
}

// The device's padding past t's bytes: 0, or, for a tensor whose bytes end where its storage ends, the rest of the
// storage's block, device_block_bytes(S) - S for a storage of S bytes -- a tensor that owns its block (S = its bytes),
// or a contiguous view at its storage's tail (big[216:], the last torch.split piece): on the device the block's
// padding follows the storage, whoever's bytes end there. A view ending before its storage's end: 0 (the storage's
// other bytes follow it, another tensor's on the device). t is a kernel input, contiguous (as_kernel_input makes it
// so), so its bytes end at storage offset + nbytes.
uint64_t pad_after(const at::Tensor& t) {
  if (owns_block(t)) return device_block_bytes(t.nbytes()) - t.nbytes();
  if (t.nbytes() == 0) return 0;
  const uint64_t s = t.storage().nbytes(), end = t.storage_offset() * t.element_size() + t.nbytes();
  return end == s ? device_block_bytes(s) - s : 0;
}

// The padding's host bytes: fixed, so a checked and a fast launch see the same bits (a checked launch calls them
// garbage, gm_pad.h gm_pad_begin: what a kernel does with them is caught there).
constexpr int kPadFill = 0x5A;

// A fresh tensor whose block carries the device's padding past its bytes. Its storage is nbytes long, as torch_npu's
// is (the allocation behind it is longer), so it owns its block when passed on to the next op as well.
at::Tensor padded_empty(const std::vector<int64_t>& shape, const at::TensorOptions& options) {
  const size_t n = static_cast<size_t>(c10::multiply_integers(shape)) * options.dtype().itemsize();
  if (n == 0) return at::empty(shape, options);
  const size_t block = device_block_bytes(n);
  c10::Allocator* a = c10::GetCPUAllocator();
  c10::DataPtr p = a->allocate(block);
  std::memset(static_cast<char*>(p.get()) + n, kPadFill, block - n);
  c10::Storage s(c10::Storage::use_byte_size_t(), n, std::move(p), a, /*resizable=*/true);
  // made directly, not through the dispatcher (at::empty + set_ cost a small call about a microsecond more)
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(std::move(s), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                          options.dtype());
  t.unsafeGetTensorImpl()->set_sizes_contiguous(shape);
  return t;
}

// An input that owns its block runs from a padded copy (the caller's tensor has no host bytes past its own); what the
// kernel writes into the data goes back to the caller's tensor after the launch, never the padding.
struct Staged {
  char* buf = nullptr;    // the data's first byte in the copy (the kernel's argument)
  size_t block = 0;       // its bytes and the padding after them
  void* back = nullptr;   // the caller's bytes to copy the data back to (null: the input was already a copy)
  size_t n = 0;
  // The copy's data as staged, when the launch's writes are not known: the copy changed if it differs. Never the
  // caller's bytes, which another thread (or another argument's view of them) may change meanwhile.
  const char* pristine = nullptr;
};

// The copies' memory, per thread and input slot, kept for the next call for inputs up to kKeepStaging bytes: a fresh
// allocation of a large copy faults its pages in at every call (a 1 MB input: hundreds of microseconds). A launch
// runs no torch op between staging and copying back, so a thread's slots are never in use twice at once.
// (Plain aligned host memory, not torch's allocator: a thread's kept copies are freed at its exit, past torch's reach.)
constexpr size_t kKeepStaging = size_t(16) << 20;
struct FreeBytes {
  void operator()(char* p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char, FreeBytes>;
Bytes alloc_bytes(size_t n) {
  auto* p = static_cast<char*>(std::aligned_alloc(512, (n + 511) / 512 * 512));   // a block's alignment
  TORCH_CHECK(p != nullptr, "opkit: cannot allocate ", n, " bytes for a kernel input's padded copy");
  return Bytes(p);
}
struct SlotBuffers {
  std::vector<Bytes> bufs;
  std::vector<size_t> bytes;
};
thread_local SlotBuffers t_staging, t_pristine;
struct Oneoff {   // the copies of one input too large to keep (kKeepStaging), freed after the call
  Bytes copy, pristine;
};

// `bytes` of memory for input `slot`: the thread's kept buffer, or for data above kKeepStaging a fresh one.
char* slot_buffer(SlotBuffers& kept, size_t slot, size_t data, size_t bytes, Bytes& oneoff) {
  if (data > kKeepStaging) {   // the data, not the block: a 16 MB tensor (block 16 MB + 512) is kept
    oneoff = alloc_bytes(bytes);
    return oneoff.get();
  }
  if (kept.bufs.size() <= slot) {
    kept.bufs.resize(slot + 1);
    kept.bytes.resize(slot + 1, 0);
  }
  if (kept.bytes[slot] < bytes) {
    kept.bufs[slot] = alloc_bytes(bytes);
    kept.bytes[slot] = bytes;
  }
  return kept.bufs[slot].get();
}

// `pristine`: also keep the copy's data as staged (only where it may go back: the caller's own tensor). `pad`:
// pad_after(t). The data sits at its storage offset modulo 512 in the copy, as in the device's block (a tail view's
// GM address keeps its alignment; an owning tensor's is the block's start). Cosmetic: no emulator check reads a GM
// address's alignment, so nothing observable depends on it.
Staged stage(size_t slot, const at::Tensor& t, const at::Tensor& callers, uint64_t pad, bool pristine,
             Oneoff& oneoff) {
  Staged s;
  s.n = t.nbytes();
  s.block = s.n + pad;
  const size_t lead = static_cast<size_t>(t.storage_offset() * t.element_size()) % 512;
  s.buf = slot_buffer(t_staging, slot, s.n, lead + s.block, oneoff.copy) + lead;
  std::memcpy(s.buf, t.data_ptr(), s.n);
  std::memset(s.buf + s.n, kPadFill, s.block - s.n);
  if (callers.defined() && callers.data_ptr() == t.data_ptr()) s.back = t.data_ptr();
  if (pristine && s.back) {
    char* p = slot_buffer(t_pristine, slot, s.n, s.n, oneoff.pristine);
    std::memcpy(p, s.buf, s.n);   // from the copy: the caller's bytes may have changed since
    s.pristine = p;
  }
  return s;
}

}  // namespace

const opkit_launch_result& last_launch() { return t_last; }

void set_module_builder(ModuleBuilder builder) {
  std::lock_guard<std::mutex> g(g_builder_mu);
  g_builder = builder ? std::make_shared<const ModuleBuilder>(std::move(builder)) : nullptr;
}
bool last_launch_checked() { return t_last_checked; }
uint64_t last_launch_staged() { return t_last_staged; }
uint64_t last_launch_copied_back() { return t_last_copied; }

void check_args(const OpDesc& d, const c10::IValue* args) {
  const at::Tensor& lead = args[0].toTensor();
  TORCH_CHECK(variant_of(d, lead.scalar_type()) >= 0, d.label, ": ", d.inputs[0].name, " has dtype ", lead.scalar_type(),
              "; expected one of ", d.dtypes_text);
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    const InputDesc& in = d.inputs[i];
    const int64_t dim = args[i].toTensor().dim();
    TORCH_CHECK(in.ellipsis ? dim >= in.fixed_rank : dim == in.fixed_rank, d.label, ": ", in.name, " has ", dim,
                " dims; expected ", in.ellipsis ? "at least " : "", in.fixed_rank, " (shape [", in.shape, "])");
  }
  const c10::IValue* attrs = args + d.inputs.size();
  for (size_t a = 0; a < d.attrs.size(); ++a) {
    const AttrDesc& ad = d.attrs[a];
    if (ad.choices.empty()) continue;
    bool ok = false;
    for (const c10::IValue& c : ad.choices) ok = ok || attr_matches(attrs[a], c, ad.type);
    TORCH_CHECK(ok, d.label, ": ", ad.name, " is '", attr_text(attrs[a]), "'; expected one of ", ad.choices_text);
  }
}

void EmulatorKernel::operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack) {
  t_last_staged = t_last_copied = 0;   // this call's, also when it launches nothing or throws before the launch
  const OpDesc& d = *d_;
  const size_t n_in = d.inputs.size(), n_args = n_in + d.attrs.size();
  const c10::IValue* args = &*(stack->end() - static_cast<std::ptrdiff_t>(n_args));
  const c10::IValue* attrs = args + n_in;
  check_args(d, args);
  const at::Tensor& lead = args[0].toTensor();
  const at::ScalarType lead_dtype = lead.scalar_type();
  int64_t dim = -1;
  bool move = false;
  if (d.dim_attr >= 0) {
    dim = c10::maybe_wrap_dim(attrs[d.dim_attr].toInt(), lead.dim());
    move = lead.dim() > 0 && dim != lead.dim() - 1;   // the kernel works on the last dim
  }
  std::vector<at::Tensor> ins;
  ins.reserve(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    const at::Tensor& t = args[i].toTensor();
    ins.push_back(as_kernel_input(move && d.inputs[i].moves ? t.movedim(dim, -1) : t, lead_dtype));
  }
  std::vector<int64_t> vars(static_cast<size_t>(d.num_vars), 0);
  for (const DimCheck& c : d.checks) {
    const at::Tensor& t = ins[c.input];
    const InputDesc& in = d.inputs[c.input];
    if (c.kind == DimCheck::Batch) {
      const at::Tensor& o = ins[c.owner];
      TORCH_CHECK(t.sizes().slice(0, t.dim() - c.index) == o.sizes().slice(0, o.dim() - c.value), d.label,
                  ": the leading dims of ", in.name, " ", t.sizes(), " do not match those of ", d.inputs[c.owner].name,
                  " ", o.sizes());
      continue;
    }
    const int64_t size = t.size(c.index);
    if (c.kind == DimCheck::Fixed) {
      TORCH_CHECK(size == c.value, d.label, ": ", in.name, ".size(", c.index, ") is ", size, "; expected ", c.value,
                  " (shape [", in.shape, "])");
    } else if (c.kind == DimCheck::Same) {
      TORCH_CHECK(size == vars[c.var], d.label, ": ", in.name, ".size(", c.index, ") is ", size, " but ", c.label, " is ",
                  vars[c.var], " (from ", d.inputs[c.owner].name, "); expected equal (shape [", in.shape, "])");
    } else {
      vars[c.var] = size;
    }
  }
  const bool empty = ins[0].numel() == 0;
  // Under opkit's harness (OPKIT_POISON_OUTPUTS) every output starts as bytes 0x7B (a large finite value in
  // fp32/fp16/bf16), so an element the kernel never writes cannot pass by holding, from recycled memory, the
  // right answer of an earlier identical computation.
  const bool poison = !empty && std::getenv("OPKIT_POISON_OUTPUTS") != nullptr;
  std::vector<at::Tensor> outs;
  outs.reserve(d.outputs.size());
  for (const OutputDesc& o : d.outputs) {
    std::vector<int64_t> shape;
    if (o.like >= 0) {
      shape = ins[o.like].sizes().vec();
    } else {
      shape = ins[o.reduce_src].sizes().vec();
      if (!shape.empty()) {
        shape.pop_back();
        if (keepdim(d, o, attrs)) shape.push_back(1);
      }
    }
    const auto options = ins[0].options().dtype(kernel_dtype(o, lead_dtype));
    if (empty) {
      outs.push_back(at::zeros(shape, options));
      continue;
    }
    outs.push_back(padded_empty(shape, options));
    if (o.zero || poison) std::memset(outs.back().data_ptr(), o.zero ? 0 : 0x7B, outs.back().nbytes());
  }
  if (!empty) {
    const int variant = variant_of(d, lead_dtype);
    const Module& m = module(d, variant, naive_);
    opkit::TilingContext ctx;
    ctx.inputs.reserve(ins.size());   // one allocation each, not one per doubling
    ctx.outputs.reserve(outs.size());
    for (const at::Tensor& t : ins) ctx.inputs.push_back(info(d, t));
    for (const at::Tensor& t : outs) ctx.outputs.push_back(info(d, t));
    for (size_t a = 0; a < d.attrs.size(); ++a) {
      const AttrDesc& ad = d.attrs[a];
      if (ad.is_dim) {
        ctx.int_attrs[ad.name] = -1;   // moved last above
      } else if (ad.type == AttrType::Float) {
        ctx.float_attrs[ad.name] = attrs[a].toDouble();
      } else if (ad.type == AttrType::Int) {
        ctx.int_attrs[ad.name] = attrs[a].toInt();
      } else if (ad.type == AttrType::Bool) {
        ctx.int_attrs[ad.name] = attrs[a].toBool() ? 1 : 0;
      } else {
        ctx.str_attrs[ad.name] = attrs[a].toStringRef();
      }
    }
    // The tiling struct lives in this buffer (on the stack unless it is unusually large).
    const unsigned long td_size = m.tiling_size();
    alignas(16) unsigned char td_stack[512];
    std::vector<unsigned char> td_heap;
    unsigned char* td = td_stack;
    if (td_size > sizeof td_stack) {
      td_heap.resize(td_size + 16);
      td = td_heap.data() + (16 - reinterpret_cast<uintptr_t>(td_heap.data()) % 16) % 16;
    }
    char err[1024] = {0};
    TORCH_CHECK(m.tiling_run(&ctx, td, err, sizeof err) == 0, d.label, ": ", d.tiling_func, ": ", err);
    TORCH_CHECK(ctx.block_dim >= 1 && ctx.block_dim <= ctx.platform.vector_cores, d.label, ": ", d.tiling_func,
                " set block_dim=", ctx.block_dim, "; expected 1..", ctx.platform.vector_cores, " (", ctx.platform.soc, ")");
    // GM is host memory here: the tiling struct goes from the stack; a workspace only when tiling asks.
    at::Tensor workspace;
    if (ctx.workspace_bytes > 0)
      workspace = at::zeros({static_cast<int64_t>(ctx.workspace_bytes)}, ins[0].options().dtype(at::kByte));
    opkit_launch_args la{};
    la.abi_version = OPKIT_LAUNCH_ABI_VERSION;
    la.block_dim = ctx.block_dim;
    la.num_args = static_cast<uint32_t>(d.num_gm_args);
    la.tiling_key = ctx.tiling_key;
    // A tensor whose bytes end where its storage ends has the device's padding past its data (pad_after): an output
    // allocated so, an input through a padded copy when the launch may reach its padding (below); a view ending before
    // its storage's end has exactly its bytes. arg_bytes has the padding either way, so the key is the same staged
    // or not.
    size_t k = 0;
    for (size_t i = 0; i < ins.size(); ++i, ++k) {
      const at::Tensor& t = ins[i];
      la.args[k] = t.data_ptr();
      la.arg_bytes[k] = la.arg_data_bytes[k] = t.nbytes();
      la.arg_bytes[k] += pad_after(t);
    }
    for (const at::Tensor& t : outs) {
      la.args[k] = t.data_ptr();
      la.arg_data_bytes[k] = t.nbytes();
      la.arg_bytes[k] = t.nbytes() > 0 ? device_block_bytes(t.nbytes()) : 0;   // padded_empty's block
      ++k;
    }
    la.args[k] = ctx.workspace_bytes > 0 ? workspace.data_ptr() : nullptr;
    la.arg_bytes[k] = la.arg_data_bytes[k] = ctx.workspace_bytes;   // the kernel may use exactly what tiling asked for
    ++k;
    la.args[k] = td;
    la.arg_bytes[k] = la.arg_data_bytes[k] = td_size;
    const CheckMode mode = check_mode();
    std::string key;
    bool fast = mode == CheckMode::Fast;
    // What the launch may do to each GM argument (a bit each): reach its padding, write it. A checked launch may do
    // anything (it finds out); a fast launch after its key's checked one does what that one did (the premise `once`
    // rests on: the key fixes the addresses); OPKIT_EMU_CHECKS=fast knows nothing.
    Module::Marks may;
    // An input in several slots (op(x, x), op(x, x.view(-1)): the same data pointer and bytes) is one buffer on the
    // device. The key has no aliasing in it (op(x, x) and op(a, b) of one shape share it), and the runtime records a
    // shared buffer's marks on its first slot only (gm_find: the first region holding an address), so marks are kept
    // per group: recorded on every slot of the group, and a fast launch stages a group if any of its slots may touch
    // (review fid14 finding 1: a fast op(a, b) after a checked op(x, x) lost b's staging, and the reverse order too).
    std::vector<size_t> first_of(ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
      first_of[i] = i;
      for (size_t j = 0; j < i; ++j)
        if (ins[i].nbytes() > 0 && ins[j].data_ptr() == ins[i].data_ptr() && ins[j].nbytes() == ins[i].nbytes()) {
          first_of[i] = first_of[j];
          break;
        }
    }
    const auto spread = [&](uint64_t bits) {   // each input slot's bit: the OR over the slots sharing its bytes
      uint64_t group = 0;
      for (size_t i = 0; i < ins.size(); ++i)
        if (bits >> i & 1) group |= uint64_t(1) << first_of[i];
      for (size_t i = 0; i < ins.size(); ++i)
        if (group >> first_of[i] & 1) bits |= uint64_t(1) << i;
      return bits;
    };
    if (mode == CheckMode::Once) {
      key = launch_key(la, td, td_size);
      std::lock_guard<std::mutex> lock(m.checked_mu);
      auto it = m.checked.find(key);
      fast = it != m.checked.end();
      if (fast) may = it->second;
    }
    may.written = spread(may.written);
    may.pad_touched = spread(may.pad_touched);
    // An input with padding (pad_after) runs from a padded copy only when the launch may reach its padding: the caller's
    // tensor has no host bytes past its own. Otherwise the kernel gets the caller's bytes, as it would without padding.
    // A fast launch of a checked key whose checked launch wrote the input copies it back as that one did; every other
    // staged input keeps its data as staged, to see whether the launch changed the copy (below).
    const bool follow_record = fast && mode == CheckMode::Once;
    std::vector<Staged> staged(ins.size());
    std::vector<Oneoff> oneoff(ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
      const uint64_t pad = pad_after(ins[i]);
      if (!pad) continue;
      // A later slot of a group sharing bytes (first_of, above) takes the first slot's buffer, which stages for all
      // and goes back once. Views that overlap without being the same bytes still get a copy each (docs/emulator.md,
      // known limits).
      const size_t first = first_of[i];
      if (first != i) {
        la.args[i] = la.args[first];
        la.arg_bytes[i] = la.arg_bytes[first];
        staged[i].buf = staged[first].buf;   // counted as staged; back stays null: the first slot copies back
        continue;
      }
      if (may.pad_touched >> i & 1) {
        const bool pristine = !(follow_record && (may.written >> i & 1));
        staged[i] = stage(i, ins[i], args[i].toTensor(), pad, pristine, oneoff[i]);
        la.args[i] = staged[i].buf;
      } else {
        // on the caller's bytes, its region is exactly them (the key above has the block): fast launches still
        // bounds-check, and a region past them would take in the next tensor's bytes (gm_find: the first region
        // holding an address wins, so an access to that tensor would be checked against this one and fail)
        la.arg_bytes[i] = ins[i].nbytes();
      }
    }
    la.flags = !fast ? 0u : mode == CheckMode::Fast ? OPKIT_LAUNCH_FAST | OPKIT_LAUNCH_ALT_FILL : OPKIT_LAUNCH_FAST;
    opkit_launch_result result{};
    const int32_t status = m.launch(&la, &result);
    t_last = result;
    t_last_checked = !fast;
    // What it did: a checked launch that ran says (opkit_kernel_last_marks). Unknown (all ones: no bit past the
    // launch's arguments can be set otherwise): a fast launch, a launch the module refused before running it, a module
    // without the export.
    Module::Marks did = may;
    if (!fast && (m.last_marks == nullptr || m.last_marks(&did.written, &did.pad_touched) != 0)) did = Module::Marks{};
    const bool stores_known = !fast && did.written != ~uint64_t(0);
    // A staged input goes back to the caller only if the launch wrote it: an input it only read is left alone (a
    // read-only mapping, a weight another thread updates meanwhile). Wrote: a store the runtime saw (a checked launch
    // that ran), a store the key's checked launch saw (a fast launch of it, follow_record), or a copy whose bytes
    // differ from its own as staged: that finds a write through a raw __gm__ pointer (no check sees it) and every write
    // where nothing is known (OPKIT_EMU_CHECKS=fast, a refused launch: no change, nothing back, an old module).
    uint64_t copied = 0, staged_mask = 0;
    for (size_t i = 0; i < staged.size(); ++i) {
      const Staged& st = staged[i];
      if (st.buf) staged_mask |= uint64_t(1) << i;
      if (!st.back) continue;
      const bool wrote = !st.pristine || (stores_known && (did.written >> i & 1)) ||
                         std::memcmp(st.buf, st.pristine, st.n) != 0;
      if (!fast) did.written = wrote ? did.written | uint64_t(1) << i : did.written & ~(uint64_t(1) << i);
      if (!wrote) continue;
      std::memcpy(st.back, st.buf, st.n);
      copied |= uint64_t(1) << i;
    }
    t_last_staged = staged_mask;
    t_last_copied = copied;
    if (mode == CheckMode::Once && !fast && status == 0 && result.status == 0) {
      did.written = spread(did.written);
      did.pad_touched = spread(did.pad_touched);
      std::lock_guard<std::mutex> lock(m.checked_mu);
      m.checked.emplace(std::move(key), did);
    }
    TORCH_CHECK(status == 0 && result.status == 0,
                result.message[0] ? result.message : "opkit emulator: kernel launch failed (no message)");
  }
  torch::jit::drop(*stack, n_args);
  for (size_t j = 0; j < d.outputs.size(); ++j) {
    const OutputDesc& o = d.outputs[j];
    at::Tensor out = std::move(outs[j]);
    const bool back = o.like >= 0 ? d.inputs[o.like].moves && move : keepdim(d, o, attrs) && move;
    if (back) out = out.movedim(-1, dim).contiguous();
    if (o.kernel_dtype >= 0) out = out.to(final_dtype(o, lead_dtype));
    stack->emplace_back(std::move(out));
  }
}

void MetaKernel::operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const OpDesc& d = *d_;
  const size_t n_in = d.inputs.size(), n_args = n_in + d.attrs.size();
  const c10::IValue* args = &*(stack->end() - static_cast<std::ptrdiff_t>(n_args));
  const c10::IValue* attrs = args + n_in;
  check_args(d, args);
  const at::Tensor& lead = args[0].toTensor();
  const int64_t dim = d.dim_attr >= 0 ? c10::maybe_wrap_dim(attrs[d.dim_attr].toInt(), lead.dim()) : 0;
  std::vector<at::Tensor> outs;
  for (const OutputDesc& o : d.outputs) {
    const at::Tensor& src = args[o.like >= 0 ? o.like : o.reduce_src].toTensor();
    std::vector<c10::SymInt> shape(src.sym_sizes().begin(), src.sym_sizes().end());
    if (o.like < 0 && !shape.empty()) {
      if (keepdim(d, o, attrs)) shape[dim] = 1;
      else shape.erase(shape.begin() + dim);
    }
    outs.push_back(at::empty_symint(shape, lead.options().dtype(final_dtype(o, lead.scalar_type()))));
  }
  torch::jit::drop(*stack, n_args);
  for (at::Tensor& t : outs) stack->emplace_back(std::move(t));
}

void AutocastKernel::operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const OpDesc& d = *d_;
  const size_t n_in = d.inputs.size(), n_args = n_in + d.attrs.size();
  c10::IValue* args = &*(stack->end() - static_cast<std::ptrdiff_t>(n_args));
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const at::ScalarType lead = args[0].toTensor().scalar_type();
  for (size_t i = 1; i < n_in; ++i) {
    const at::Tensor& t = args[i].toTensor();
    if (at::isFloatingType(t.scalar_type()) && at::isFloatingType(lead) && t.scalar_type() != lead) args[i] = t.to(lead);
  }
  op.callBoxed(stack);
}

}  // namespace opkit_rt
