"""Run a model under a precision policy on the CPU, recording every layer's output.

Two levels, so the policy sees the ops the device sees:
- *atomic modules*: modules opkit knows as one op (nn.Linear -> linear, nn.LayerNorm and ConvNeXt-style
  channels-first LayerNorms -> layer_norm, opkit-patched modules ...). Their forward runs once under the
  policy entry for their op type, whatever it calls inside.
- *function-level ops* outside atomic modules (a residual ``x + y``, ``q @ k``, ``.sum()``) are caught with a
  TorchFunctionMode and run under the entry for their name (``add``, ``matmul``, ``sum``).

Emulation of one op with entry (io, compute): floating inputs (and the module's parameters) are rounded to
the I/O dtype; compute ``float32`` runs the op in FP32 on those values (the cube's FP32 accumulation for
matmul/conv; FP32 internals of LayerNormV4 ...), ``hf32`` first rounds them to 10 mantissa bits, ``io``
runs opkit's naive kernel (``torch.ops.opkit_naive``: the same AscendC kernel computing in fp16, on the
emulator) when one exists, else PyTorch's CPU kernel on fp16 tensors; the output is rounded to the I/O
dtype. Tensors flow between ops in their real dtypes, so ``io: keep`` ops follow their inputs as on the
device.

Per-layer modes (``layers``: module path -> LayerMode) replace the policy entry for one module: an INT8 layer
of ``opkit quant`` (opkit/quant/modes.py), a conv with a BatchNorm folded into it, a folded-away BatchNorm.
They run with or without a policy (``policy=None``: FP32 around them, as AMCT's calibration runs), hold only
tensors and numbers (picklable: a variant ships to eval workers) and see the I/O dtype the policy gives
their op type. ``layer_overrides`` (module path -> Entry) keep one layer in FP32 (an overflow fix).
``functions`` (``<op>#<k>``: the k-th call of a function-level op outside the modules run as one op, in call
order -> LayerMode) do the same for function calls (a quantized ``q @ k``).
``run(..., record=False)`` skips the per-layer records (whole-dataset evaluation).
"""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from .. import patching
from .policy import Entry, Policy

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
_DT = {"float16": F16, "bfloat16": BF16, "float32": F32}
_LOW = (F16, BF16, F32)          # the dtypes a policy may change (fp64 and integers are left alone)

# Module type -> op type (exact type, or a subclass that keeps the base forward).
MODULE_OPS: dict[type, str] = {
    nn.Linear: "linear", nn.Bilinear: "bilinear", nn.Conv1d: "conv1d", nn.Conv2d: "conv2d", nn.Conv3d: "conv3d",
    nn.ConvTranspose1d: "conv_transpose1d", nn.ConvTranspose2d: "conv_transpose2d",
    nn.ConvTranspose3d: "conv_transpose3d", nn.LayerNorm: "layer_norm", nn.GroupNorm: "group_norm",
    nn.RMSNorm: "rms_norm", nn.BatchNorm1d: "batch_norm", nn.BatchNorm2d: "batch_norm",
    nn.BatchNorm3d: "batch_norm", nn.Softmax: "softmax", nn.LogSoftmax: "log_softmax", nn.GELU: "gelu",
    nn.SiLU: "silu", nn.ReLU: "relu", nn.ReLU6: "relu6", nn.LeakyReLU: "leaky_relu", nn.Tanh: "tanh",
    nn.Sigmoid: "sigmoid", nn.Hardswish: "hardswish", nn.Mish: "mish", nn.PReLU: "prelu",
    nn.MaxPool1d: "max_pool1d", nn.MaxPool2d: "max_pool2d", nn.AvgPool2d: "avg_pool2d",
    nn.AdaptiveAvgPool1d: "adaptive_avg_pool1d", nn.AdaptiveAvgPool2d: "adaptive_avg_pool2d",
    nn.Embedding: "embedding", nn.LSTM: "lstm", nn.GRU: "gru",
}

# Op types whose device kernel takes its parameters in FP32 whatever the I/O dtype, so they are not rounded
# to it when the op computes in FP32: CANN's BatchNorm / BNInfer take scale, offset, mean and variance as
# DT_FLOAT only and cast an fp16 x to FP32 inside (hicann/ops-nn norm/batch_norm/op_host/batch_norm_def.cpp;
# the BNInfer TBE kernel bn_infer.py); torch autocast leaves a BatchNorm module's FP32 buffers alone too.
FP32_PARAMS = frozenset({"batch_norm"})

# Ops whose FP32 result rounded once to float16/bfloat16 is bitwise what PyTorch's CPU kernel returns on the
# 16-bit tensors: the kernel gives the correctly rounded 16-bit result, and for + - x / sqrt float's 24-bit
# significand (>= 2 x 11 + 2) makes an IEEE FP32 op rounded once that same result (not every CPU's FP32 sqrt is
# IEEE: MKL's on AMD is one ulp off on some values, and there the 16-bit kernel is the exact one);
# relu, max-pooling, neg, abs, maximum and minimum only select values or flip signs. Under a policy that computes
# them in FP32 they run on the 16-bit tensors directly, without the two casts (tests/test_simulate_exact.py
# proves each bitwise on real cases); a call with a Python number among its operands keeps the FP32 path.
# Reductions (sum, mean, pooling averages) and transcendental ops are not here: their result depends on the
# order of the sums or on the library.
# Ops whose output is a new tensor, never a view of their input: their cast input may live in a reused buffer
# (REUSE_CAST_BUFFERS False: every cast into new memory, as before; tests compare the two bit for bit).
REUSE_CAST_BUFFERS = True
# True: inside a module the engine runs as one op (and its layer mode), the engine's TorchFunctionMode is taken off
# the stack -- every torch call there passed through it unchanged (depth > 0), each at the cost of a Python
# dispatch. False: kept on, as before (tests and benchmarks compare the two).
MODE_OFF_INSIDE_OPS = True
# True: an op the policy runs in float32 on float32 inputs and parameters is called as it is (the casts and the
# parameter swap of ``execute`` would each give back the same tensor's values). False: through them, as before.
F32_AS_IS = True
# True: a module's forward is swapped for the engine's wrapper (and back) in its instance dict directly (see
# _set_forward); False: through nn.Module.__setattr__ / __delattr__, as before (the benchmark compares the two).
DICT_FORWARD = True
# True: per-op bookkeeping without repeated work -- op names kept per function object, the "op: cpu" kernels key
# formatted once per op type, a leaf module's parameters checked without the modules() walk, the function mode
# popped and pushed around a module's inside without a context manager; False: as before.
LEAN_DISPATCH = True
# True: under a policy that runs every op type in float32, I/O and compute (amct-fake-quant; its op and per-layer
# overrides too), an op whose floating operands and parameters are all float32 is called as it is straight from
# the function mode or the module's wrapper: Simulator._as_is, the float32-as-is path execute itself calls (the
# same call, the same counters), without execute's per-call policy lookups and naive-kernel closure. False: through
# execute, as before.
F32_POLICY_FAST = True
_F32_META = ("float32", "float32", "cpu")      # what execute's float32-as-is path records for a module
FRESH_OUTPUT = frozenset({"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "gelu",
                          "layer_norm", "group_norm", "softmax", "log_softmax", "silu", "batch_norm"})

ROUNDS_ONCE = frozenset({"add", "sub", "mul", "div", "sqrt", "relu", "neg", "abs", "maximum", "minimum",
                         "max_pool1d", "max_pool2d", "max_pool3d"})

# Function names that move or view data, query metadata or cast on purpose: never touched.
STRUCTURAL = frozenset("""
__get__ __getitem__ __setitem__ __len__ __iter__ __repr__ __format__ __bool__ __hash__ __contains__ __index__
__reduce_ex__ __deepcopy__ __array__ size dim numel shape dtype device view view_as reshape reshape_as
permute transpose t flatten unflatten squeeze unsqueeze contiguous expand expand_as movedim moveaxis narrow
select split chunk unbind cat concat concatenate stack clone detach detach_ to type type_as float half
double bfloat16 int long bool cpu cuda requires_grad_ dropout dropout1d dropout2d identity tolist item
is_floating_point is_contiguous stride storage_offset data_ptr element_size new_zeros new_ones new_empty
new_full new_tensor zeros_like ones_like empty_like full_like randn_like rand_like nonzero argmax argmin
eq ne lt le gt ge isfinite isnan isinf all any is_complex get_device is_nonzero untyped_storage
""".split())



def counted_call(name: str, args, kwargs) -> bool:
    """Whether a function-level call (outside the atomic modules) is an op: what the engine runs under the
    policy and counts in its ``functions`` keys ("matmul#0"), and what opkit quant's graph and cost profile see.
    Not a data move, metadata query or deliberate cast (STRUCTURAL), not an in-place method, and on floats."""
    return bool(counted_floats(name, args, kwargs))


def counted_floats(name: str, args, kwargs) -> list:
    """The float tensor operands of a counted call (counted_call's one test), empty when it is not counted: the
    engine keeps them for execute, so the arguments are walked once."""
    if name in STRUCTURAL or (name.endswith("_") and not name.endswith("__")):
        return []
    return _floats((args, kwargs), [])


_DUNDER = {"__add__": "add", "__radd__": "add", "__iadd__": "add", "__sub__": "sub", "__rsub__": "sub",
           "__isub__": "sub", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul", "__truediv__": "div",
           "__rtruediv__": "div", "__itruediv__": "div", "__div__": "div", "__rdiv__": "div",
           "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide", "__mod__": "remainder", "__matmul__": "matmul", "__rmatmul__": "matmul",
           "__pow__": "pow", "__rpow__": "pow", "__neg__": "neg", "__abs__": "abs"}
_ALIASES = {"true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub", "_softmax": "softmax",
            "addmm": "addmm", "conv_tbc": "conv_tbc"}


def op_name(func) -> str:
    """The op type of a torch function (``Tensor.__add__`` -> ``add``, ``F.layer_norm`` -> ``layer_norm``)."""
    if LEAN_DISPATCH:
        try:
            return _OP_NAMES[func]      # asked for every function call the engine sees: kept per function object
        except (KeyError, TypeError):
            pass
    name = getattr(func, "__name__", "") or str(func)
    name = _DUNDER[name] if name in _DUNDER else _ALIASES.get(name, name)
    if LEAN_DISPATCH and len(_OP_NAMES) < 4096:
        try:
            _OP_NAMES[func] = name
        except TypeError:               # an unhashable callable: named each time
            pass
    return name


_OP_NAMES: dict = {}


def module_op_type(m: nn.Module) -> str | None:
    """The op type of a module opkit treats as one op, else None (its inner calls are seen one by one)."""
    original = m.__dict__.get("opkit_original")
    if original is not None:
        return module_op_type(original)
    t = type(m)
    if t in MODULE_OPS:
        return MODULE_OPS[t]
    if _may_be_channels_first_ln(m, t) and patching.is_channels_first_ln(m):
        return "layer_norm"
    for base in t.__mro__[1:]:
        if base in MODULE_OPS and t.forward is base.forward:
            return MODULE_OPS[base]
    return None


def _may_be_channels_first_ln(m: nn.Module, t: type) -> bool:
    """False only where patching.is_channels_first_ln(m) is False for sure: no ``data_format`` where
    ``getattr(m, "data_format", None)`` looks (the instance dict, the class, then nn.Module.__getattr__'s
    parameters, buffers and submodules -- for a class that keeps nn.Module's attribute lookup) and not a class
    named LayerNorm2d. The getattr of a missing name raises and catches an AttributeError inside nn.Module:
    ~4 us for every container module of every run (SKIP_LN_PROBE False: always asked, as before)."""
    if not SKIP_LN_PROBE or t.__name__ == "LayerNorm2d" or t.__getattr__ is not nn.Module.__getattr__ \
            or t.__getattribute__ is not object.__getattribute__:
        return True
    d = m.__dict__
    return "data_format" in d or hasattr(t, "data_format") or any(
        "data_format" in (d.get(k) or ()) for k in ("_parameters", "_buffers", "_modules"))


SKIP_LN_PROBE = True


def atomic_modules(model: nn.Module) -> dict[str, tuple[nn.Module, str]]:
    """Module path -> (module, op type) for the modules the engine runs as one op: the outermost ones
    ``module_op_type`` knows (their children are not seen one by one)."""
    atomic: dict[str, tuple[nn.Module, str]] = {}
    for name, m in model.named_modules():
        if inside(name, atomic):
            continue
        t = module_op_type(m)
        if t is not None:
            atomic[name] = (m, t)
    return atomic


def inside(name: str, atomic) -> bool:
    """Whether module path ``name`` lies inside one of ``atomic``'s paths (a dotted prefix; "" holds all)."""
    if not name:
        return False
    if "" in atomic:
        return True
    i = name.find(".")
    while i != -1:
        if name[:i] in atomic:
            return True
        i = name.find(".", i + 1)
    return False


@dataclass
class LayerOut:
    """One module call's output, with how the policy ran it."""
    name: str               # module path (``#2`` for the second call of a shared module); "" = the model
    module: str             # class name
    op_type: str            # op type, or "block" for a container module
    io_dtype: str
    compute_dtype: str
    kernel: str             # what computed it: cpu | opkit_naive.<op> | opkit.<op> | "-"
    tensor: torch.Tensor    # float32 copy of the output (first tensor of a tuple)


def _floats(obj, out: list) -> list:
    if isinstance(obj, torch.Tensor):
        if obj.dtype in _LOW:
            out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _floats(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _floats(o, out)
    return out


def hf32(t: torch.Tensor) -> torch.Tensor:
    """Round FP32 values to HF32 (10 explicit mantissa bits, FP32 exponent), round to nearest even."""
    i = t.contiguous().view(torch.int32)
    lsb = (i >> 13) & 1
    return ((i + 0x0FFF + lsb) & ~0x1FFF).view(torch.float32)


def _cast(obj, io: torch.dtype, cdt: torch.dtype, rnd: bool = False):
    """Floating tensors in ``obj`` rounded to ``io`` then held in ``cdt`` (optionally HF32-rounded)."""
    if isinstance(obj, torch.Tensor):
        if obj.dtype not in _LOW:
            return obj
        t = obj.to(io).to(cdt)
        return hf32(t) if rnd and cdt == F32 else t
    if isinstance(obj, tuple):
        return tuple(_cast(o, io, cdt, rnd) for o in obj)
    if isinstance(obj, list):
        return [_cast(o, io, cdt, rnd) for o in obj]
    if isinstance(obj, dict):
        return {k: _cast(v, io, cdt, rnd) for k, v in obj.items()}
    return obj


def _to(obj, dt: torch.dtype):
    return _cast(obj, dt, dt)


def _first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (list, tuple)):
        for o in out:
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _dname(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


# -- elementwise kernels on 16-bit inputs: a table of their 65,536 outputs ----------------------------------------
# An opkit kernel that maps each element on its own (no reduction, no neighbour, no position) is, for a
# float16/bfloat16 input, a function of 16 bits: running it once on every bit pattern gives a table that
# answers every later call bitwise as the kernel would (tests/test_simulate_exact.py checks it on real
# cases), at the cost of a gather instead of the emulator's vector loop.
ELEMENTWISE = frozenset({"gelu_fp32", "silu_fp32"})
_TABLES: dict[tuple, np.ndarray] = {}


def elementwise_key(variant: str, op: str, approximate: str | None = None) -> tuple | None:
    """The table key of opkit op ``op`` (``variant``: opkit | naive), or None for an op that is no table."""
    return (variant, op, approximate) if op in ELEMENTWISE else None


def by_table(key: tuple, kernel, x: torch.Tensor) -> torch.Tensor:
    """``kernel(x)`` for a float16/bfloat16 ``x``, read from the table of ``kernel``'s outputs on every bit
    pattern (built on the first call per key and dtype, kept for the process)."""
    tk = (key, x.dtype)
    tab = _TABLES.get(tk)
    if tab is None:
        every = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(x.dtype)
        out = kernel(every)
        if not isinstance(out, torch.Tensor) or out.dtype != x.dtype or out.shape != every.shape:
            raise RuntimeError(f"{key}: not an elementwise kernel (output {getattr(out, 'shape', out)})")
        tab = _TABLES[tk] = out.contiguous().view(torch.int16).numpy().view(np.uint16)
    bits = x.detach().contiguous().view(torch.int16).numpy().view(np.uint16)
    return torch.from_numpy(tab[bits].view(np.int16)).view(x.dtype)


def _table_ok(x, args, kwargs) -> bool:
    return (len(args) == 1 and not kwargs and isinstance(x, torch.Tensor) and x.dtype in (F16, BF16)
            and x.device.type == "cpu")


# Naive (fp16-computing) opkit kernels for function-level calls: name -> (args, kwargs) -> call or None.
def _naive_call(name: str, args, kwargs):
    ops = patching.Ops("naive")
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, torch.Tensor):
        return None
    if name == "layer_norm":
        shape = args[1] if len(args) > 1 else kwargs.get("normalized_shape")
        w = args[2] if len(args) > 2 else kwargs.get("weight")
        b = args[3] if len(args) > 3 else kwargs.get("bias")
        eps = args[4] if len(args) > 4 else kwargs.get("eps", 1e-5)
        if len(shape) != 1 or w is None or b is None or not ops.has("layer_norm_fp32"):
            return None
        return lambda: ops.layer_norm_fp32(x, w, b, float(eps))
    if name == "softmax":
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if dim is None or kwargs.get("dtype") is not None or not ops.has("softmax_fp32"):
            return None
        return lambda: ops.softmax_fp32(x, int(dim))
    if name == "gelu" and ops.has("gelu_fp32"):
        approx = kwargs.get("approximate", args[1] if len(args) > 1 else "none")
        return lambda: by_table(("naive", "gelu_fp32", approx), lambda t: ops.gelu_fp32(t, approx), x)
    if name == "silu" and ops.has("silu_fp32") and len(args) == 1 and not kwargs.get("inplace"):
        return lambda: by_table(("naive", "silu_fp32", None), ops.silu_fp32, x)
    return None


class LayerMode:
    """How the engine runs one module instead of its policy entry (subclasses: opkit/quant/modes.py).

    Subclasses keep only tensors, numbers and strings (no closures): a variant is pickled to workers.
    ``run`` gets the simulator (``sim.io_dtype(op_type, floats)``: the I/O dtype the policy gives an op
    type), the module, its original forward and the call's arguments; it returns (output, I/O dtype,
    compute label, kernel label).
    """
    op_type = "layer"

    def run(self, sim: "Simulator", module: nn.Module, forward, args: tuple, kwargs: dict):
        raise NotImplementedError


class Simulator:
    """Runs a model under ``policy`` (None: the plain FP32 reference) and records every layer's output.

    ``overrides``: op type -> Entry, applied over the policy (the rescue runs keep one op type in FP32).
    ``layers``: module path -> LayerMode (INT8 layers, folded BatchNorms ...); ``layer_overrides``: module
    path -> Entry (one layer kept in FP32). ``notes`` collects what modes report (int32 overflow ...).
    """

    def __init__(self, policy: Policy | None, overrides: dict[str, Entry] | None = None, naive: bool = True,
                 layers: dict[str, LayerMode] | None = None, layer_overrides: dict[str, Entry] | None = None,
                 functions: dict[str, LayerMode] | None = None):
        self.policy = policy
        self.overrides = dict(overrides or {})
        self.layers = dict(layers or {})
        self.functions = dict(functions or {})
        self.fn_calls: Counter = Counter()    # function-level op -> calls so far in this run
        self.layer_overrides = dict(layer_overrides or {})
        self.notes: list[str] = []
        self.naive = naive
        self.depth = 0
        self.lowered: Counter = Counter()     # op type -> calls run below FP32 (I/O or compute)
        self.seen: Counter = Counter()        # op type -> calls
        self.kernels: Counter = Counter()     # what computed the lowered calls: "layer_norm: opkit_naive..."
        self._meta: dict[int, tuple[str, str, str]] = {}
        self._naive_mods: dict[int, nn.Module | None] = {}
        self._pcache: dict = {}               # (tensor id, io, compute, hf32) -> rounded copy (see _params_as)
        self._bufs: dict = {}                 # (shape, dtype, slot) -> a cast buffer reused (see _cast_input)
        self._mode: "_PolicyMode | None" = None   # the function mode of the run under way, if any
        self._cpu_keys: dict[str, str] = {}   # op type -> its "op: cpu" kernels key (formatted once)
        self._f32_only = False                # the run under way: every op float32 (F32_POLICY_FAST, _all_float32)
        # called with (args, kwargs) of every function op the policy mode sees outside the modules it runs as
        # one op (quant/prefix.py: which module outputs the model's own code reads)
        self.observe: Callable[[tuple, dict], None] | None = None

    # -- resolution ---------------------------------------------------------------------------------
    def entry(self, op_type: str, layer: str | None = None) -> Entry:
        if layer is not None and layer in self.layer_overrides:
            return self.layer_overrides[layer]
        return self.overrides.get(op_type) or self.policy.entry(op_type)

    def io_dtype(self, op_type: str, floats: list) -> torch.dtype:
        """The dtype the policy calls ``op_type`` with, given its floating inputs (FP32 without a policy)."""
        if self.policy is None:
            return F32
        e = self.entry(op_type)
        if e.io != "keep":
            return _DT[e.io]
        io = floats[0].dtype if floats else F32
        for t in floats[1:]:
            io = torch.promote_types(io, t.dtype)
        return io

    def _resolve(self, op_type: str, floats: list, layer: str | None = None) -> tuple[torch.dtype, str]:
        e = self.entry(op_type, layer)
        if e.io == "keep":
            io = floats[0].dtype
            for t in floats[1:]:
                io = torch.promote_types(io, t.dtype)
        else:
            io = _DT[e.io]
        compute = "float32" if e.compute == "io" and io == F32 else e.compute
        self.seen[op_type] += 1
        if io != F32 or compute != "float32":
            self.lowered[op_type] += 1
        return io, compute

    def _all_float32(self) -> bool:
        """Whether every op type resolves to float32 I/O and float32 compute: the policy (not mixed, its default
        and every op entry), the op overrides and the per-layer overrides -- then execute gives every op on float32
        operands and parameters its float32-as-is path."""
        p = self.policy
        if not (F32_POLICY_FAST and F32_AS_IS) or p is None or p.mixed or type(p).entry is not Policy.entry:
            return False
        for e in (p.default, *p.ops.values(), *self.overrides.values(), *self.layer_overrides.values()):
            if e.io != "float32" or e.compute not in ("float32", "io"):
                return False
        return True

    def _as_is(self, op_type: str, fn, args, kwargs, count_seen: bool = True):
        """The float32-as-is path, the only copy of it: the op on float32 operands and parameters, resolved to
        float32 I/O and compute, called as it is (every cast would hand back the tensor itself) and counted (``seen``
        before the call unless ``count_seen`` is False -- execute's _resolve counted it --, the cpu kernel after).
        Called by execute and, under F32_POLICY_FAST, straight by the function mode and the module wrapper once
        ``_f32_only`` and the operands are checked."""
        if count_seen:
            self.seen[op_type] += 1
        out = fn(*args, **kwargs)
        key = self._cpu_keys.get(op_type) if LEAN_DISPATCH else None
        if key is None:
            key = self._cpu_keys[op_type] = f"{op_type}: cpu"
        self.kernels[key] += 1
        return out if isinstance(out, torch.Tensor) and out.dtype == F32 else _to(out, F32)

    # -- one op ---------------------------------------------------------------------------------------
    def execute(self, op_type: str, fn, args, kwargs, naive=None, module: nn.Module | None = None,
                 layer: str | None = None, floats: list | None = None):
        """Run ``fn(*args, **kwargs)`` as the policy says (``layer``: whose layer_overrides apply); returns
        (output, io, compute label, kernel). Layer modes call it for the float parts they run. ``floats``: the
        floating tensors among the arguments, when the caller has them already."""
        if floats is None:
            floats = _floats((args, kwargs), [])
        io, compute = self._resolve(op_type, floats, layer)
        if F32_AS_IS and io == F32 and compute == "float32" and _all_f32(floats) and _params_in(module, F32):
            # every cast below would hand back the tensor itself (float32 to float32): the op runs as it is
            return self._as_is(op_type, fn, args, kwargs, count_seen=False), io, "float32", "cpu"
        if compute == "io":
            if naive is not None and self.naive and io in (F16, BF16):
                call = naive(_to(args, io), _to(kwargs, io))
                if call is not None:
                    out, kernel = call()
                    self.kernels[f"{op_type}: {kernel}"] += 1
                    return _to(out, io), io, _dname(io), kernel
            cdt, rnd, label = io, False, _dname(io)
        elif compute == "float32" and io in (F16, BF16) and op_type in ROUNDS_ONCE and _no_params(module) \
                and _tensor_operands(args, kwargs):
            cdt, rnd, label = io, False, compute      # the 16-bit kernel gives the FP32-then-rounded bits
        else:
            cdt, rnd, label = F32, compute == "hf32", compute
        p_io = F32 if op_type in FP32_PARAMS and cdt == F32 else io
        try:
            with _params_as(module, p_io, cdt, rnd, self._pcache):
                a = self._cast_input(op_type, args, io, cdt, rnd)
                out = fn(*a, **_cast(kwargs, io, cdt, rnd))
                self._release_input(a, out)
            kernel = "cpu"
        except (RuntimeError, NotImplementedError) as e:
            if cdt == F32 or "not implemented" not in str(e):
                raise
            with _params_as(module, io, F32, False, self._pcache):   # no CPU fp16 kernel: FP32 internals, said so
                out = fn(*_cast(args, io, F32), **_cast(kwargs, io, F32))
            kernel, label = "cpu (no fp16 CPU kernel: FP32 internals)", "float32"
        self.kernels[f"{op_type}: {kernel}"] += 1
        return _to(out, io), io, label, kernel

    def _cast_input(self, op_type: str, args, io: torch.dtype, cdt: torch.dtype, rnd: bool):
        """``_cast(args, ...)``, the first argument cast into a buffer kept for the next call of that shape: the
        casts of ConvNeXt's activations into fresh memory were mostly page faults (a [16, 56, 56, 384] float16
        -> float32 cast: 18,816 minor faults, 64 ms; 3 ms into memory already touched). The same copy kernel
        (``copy_`` is what ``.to`` runs), so the same values; only for ops that return a new tensor and a
        contiguous input (a buffer has no other layout), and never while an output shares it."""
        x = args[0] if args else None
        # never under autograd: a kept buffer saved for backward would be overwritten by the next call
        if (not REUSE_CAST_BUFFERS or torch.is_grad_enabled() or op_type not in FRESH_OUTPUT
                or not isinstance(x, torch.Tensor) or x.dtype not in _LOW or rnd or not x.is_contiguous()
                or x.numel() < 1 << 16 or x.dtype == io == cdt):
            return _cast(args, io, cdt, rnd)
        src = x
        if x.dtype != io:
            src = self._buffer(x.shape, io, 0)
            src.copy_(x)
        if io != cdt:
            dst = self._buffer(x.shape, cdt, 1)
            dst.copy_(src)
            src = dst
        return (src, *_cast(tuple(args[1:]), io, cdt, rnd))

    def _buffer(self, shape, dtype: torch.dtype, slot: int) -> torch.Tensor:
        key = (tuple(shape), dtype, slot)
        b = self._bufs.get(key)
        if b is None:
            b = self._bufs[key] = torch.empty(shape, dtype=dtype)
        return b

    def _release_input(self, args, out) -> None:
        """An output that shares the kept buffer it was computed from takes it along (the next call gets a new
        one). Only the buffer passed to the op can be shared, so a call without one costs nothing here."""
        x = args[0] if args else None
        key = next((k for k, b in self._bufs.items() if b is x), None)
        if key is None:
            return
        ptr = x.untyped_storage().data_ptr()
        if any(isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() == ptr for t in tree_leaves(out)):
            del self._bufs[key]

    def _naive_module(self, m: nn.Module):
        """``execute``'s naive hook for module ``m``: its replacement on opkit's naive kernel, looked up on the
        first call that computes in fp16/bf16 (looking it up may load or build the op: never for a policy
        that keeps the module in FP32, nor with ``naive=False``)."""
        if not self.naive:
            return None

        def naive(args, kwargs):
            if id(m) not in self._naive_mods:
                factory, _ = patching.find_mapping(m)
                rep = None
                if factory is not None:
                    try:
                        rep = factory(m, patching.Ops("naive"))
                    except (patching.CannotPatch, Exception):  # noqa: BLE001 - no naive kernel: CPU fp16
                        rep = None
                self._naive_mods[id(m)] = rep
            rep = self._naive_mods[id(m)]
            if rep is None:
                return None
            key = elementwise_key("naive", rep.opkit_op, getattr(rep, "approximate", None))
            if key is not None and _table_ok(args[0] if args else None, args, kwargs):
                return lambda: (by_table(key, rep, args[0]), f"opkit_naive.{rep.opkit_op}")
            return lambda: (rep(*args, **kwargs), f"opkit_naive.{rep.opkit_op}")
        return naive

    def _wrap_module(self, m: nn.Module, op_type: str, forward, name: str = ""):
        mode = self.layers.get(name)

        def fwd(*args, **kwargs):
            if MODE_OFF_INSIDE_OPS and self._mode is not None and \
                    torch.overrides._get_current_function_mode() is self._mode:
                if LEAN_DISPATCH:
                    # what _pop_mode_temporarily does, without its generator-based context manager per call
                    old = torch.overrides._pop_mode()
                    try:
                        return fwd(*args, **kwargs)
                    finally:
                        torch.overrides._push_mode(old)
                with torch.overrides._pop_mode_temporarily():
                    return fwd(*args, **kwargs)
            self.depth += 1
            try:
                if mode is not None:
                    out, io, label, kernel = mode.run(self, m, forward, args, kwargs)
                    meta = (_dname(io), label, kernel)
                    self.seen[mode.op_type] += 1
                    self.kernels[f"{mode.op_type}: {kernel}"] += 1
                elif self.policy is None:               # FP32 (wrapped only to keep function-level calls apart)
                    return forward(*args, **kwargs)
                elif m.__dict__.get("opkit_original") is not None:     # an opkit op: its kernel computes in FP32
                    io, _ = self._resolve(op_type, _floats((args, kwargs), []))
                    a, k = _to(args, io), _to(kwargs, io)
                    key = elementwise_key(getattr(m, "variant", "opkit"), getattr(m, "opkit_op", ""),
                                          getattr(m, "approximate", None))
                    if key is not None and _table_ok(a[0] if a else None, a, k):
                        out = by_table(key, forward, a[0])
                    else:
                        out = _to(forward(*a, **k), io)
                    meta = (_dname(io), "float32", f"opkit.{getattr(m, 'opkit_op', type(m).__name__)}")
                    self.kernels[f"{op_type}: {meta[2]}"] += 1
                else:
                    floats = _floats((args, kwargs), []) if self._f32_only else None
                    if floats is not None and _all_f32(floats) and _params_in(m, F32):
                        out, meta = self._as_is(op_type, forward, args, kwargs), _F32_META
                    else:
                        out, io, label, kernel = self.execute(op_type, forward, args, kwargs,
                                                               naive=self._naive_module(m), module=m, layer=name,
                                                               floats=floats)
                        meta = (_dname(io), label, kernel)
                self._meta[id(m)] = meta
                return out
            finally:
                self.depth -= 1
        return fwd

    # -- a whole run ----------------------------------------------------------------------------------
    def run(self, model: nn.Module, inputs: tuple, record: bool = True,
            given: dict[str, Callable[[], object]] | None = None) -> tuple[object, list[LayerOut]]:
        """The model's output and, with ``record``, every layer's output (module calls in order).

        ``given``: module path -> a function returning that module's output; the module is not run (nor anything
        inside it) -- its call returns ``given[path]()`` (opkit quant's prefix reuse, quant/prefix.py, hands in
        what an earlier run of the same modes computed). Only with ``record=False``. A module given is not run, so
        this Simulator's ``notes`` (int32 overflow), ``seen``, ``lowered`` and ``kernels`` miss what it would have
        added: read them from a full run."""
        if given and record:
            raise ValueError("Simulator.run: given outputs and a recorded run exclude each other")
        records: list[LayerOut] = []
        calls: Counter = Counter()
        atomic = atomic_modules(model)
        hooked = [(name, m) for name, m in model.named_modules() if not inside(name, atomic)] if record else []

        def hook_for(name: str, m: nn.Module):
            t = atomic.get(name, (None, "block"))[1]

            def hook(mod, args, out):
                calls[name] += 1
                key = name if calls[name] == 1 else f"{name}#{calls[name]}"
                tensor = _first_tensor(out)
                if tensor is None or not tensor.is_floating_point():
                    return
                if id(mod) in self._meta:
                    meta = self._meta[id(mod)]
                elif self.policy is None or t == "block":
                    io = _dname(tensor.dtype) if t != "block" else "-"
                    meta = (io, io, "cpu" if t != "block" else "-")
                else:
                    meta = ("?", "?", "?")
                records.append(LayerOut(key, type(mod).__name__, t, *meta,
                                        tensor.detach().to(torch.float32).clone()))
            return hook

        unknown = sorted(set(self.layers) - set(atomic))
        if unknown:
            raise ValueError(f"layer modes for modules the engine does not run as one op: {', '.join(unknown)}")
        handles = [m.register_forward_hook(hook_for(n, m)) for n, m in hooked] if record else []
        saved = []
        self._meta.clear()
        self.fn_calls.clear()
        policy_mode = self.policy is not None or bool(self.functions)
        self._mode = _PolicyMode(self) if policy_mode else None
        self._f32_only = self._all_float32()
        try:
            for name, (m, t) in atomic.items():
                if (policy_mode or name in self.layers) and not (given and name in given):
                    saved.append((m, m.__dict__.get("forward")))
                    _set_forward(m, self._wrap_module(m, t, m.forward, name))
            if given:
                mods = dict(model.named_modules())
                for name, out in given.items():
                    m = mods[name]
                    saved.append((m, m.__dict__.get("forward")))
                    _set_forward(m, self._given(out))
            with torch.no_grad(), (self._mode if policy_mode else _null()):
                out = model(*inputs)
        finally:
            self._mode = None
            self._f32_only = False
            for h in handles:
                h.remove()
            for m, fwd in saved:
                _set_forward(m, fwd)
        return out, records

    def _given(self, out: Callable[[], object]):
        def fwd(*args, **kwargs):
            self.depth += 1              # what ``out`` does (a copy) is no op of the model: the mode lets it pass
            try:
                return out()
            finally:
                self.depth -= 1
        return fwd


def _set_forward(m: nn.Module, fwd) -> None:
    """``m.forward = fwd`` (``del m.forward`` for None) straight in the instance ``__dict__``: what
    nn.Module.__setattr__ / __delattr__ end in for a value that is not a Parameter, Module or Tensor and a name
    none of ``_parameters``, ``_buffers``, ``_modules`` holds (then they fall through to object's, which writes
    the instance dict: a function on the class is no data descriptor) -- without their checks, which cost
    ~7 us a module, twice per module per batch. Any other case (a class with its own __setattr__ / __delattr__,
    such as a ScriptModule) takes the class's own path."""
    d, t = m.__dict__, type(m)
    plain = DICT_FORWARD and t.__setattr__ is nn.Module.__setattr__ and t.__delattr__ is nn.Module.__delattr__ \
        and not any("forward" in (d.get(k) or ()) for k in ("_parameters", "_buffers", "_modules"))
    if fwd is None:
        if plain:
            d.pop("forward", None)
        else:
            del m.forward
    elif plain and not isinstance(fwd, (nn.Module, torch.Tensor)):
        d["forward"] = fwd
    else:
        m.forward = fwd


class _PolicyMode(TorchFunctionMode):
    """Function-level ops outside atomic modules run under the policy entry for their name."""

    def __init__(self, sim: Simulator):
        super().__init__()
        self.sim = sim

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        sim = self.sim
        if sim.depth:
            return func(*args, **kwargs)
        if sim.observe is not None:
            sim.observe(args, kwargs)
        name = op_name(func)
        floats = counted_floats(name, args, kwargs)
        if not floats:
            return func(*args, **kwargs)
        n = sim.fn_calls[name]
        sim.fn_calls[name] = n + 1
        mode = sim.functions.get(f"{name}#{n}") if sim.functions else None
        if mode is not None:
            sim.depth += 1
            try:
                out, _, _, kernel = mode.run(sim, None, func, args, kwargs)
                sim.seen[name] += 1
                sim.kernels[f"{name}: {kernel}"] += 1
                return out
            finally:
                sim.depth -= 1
        if sim.policy is None:
            return func(*args, **kwargs)
        if sim._f32_only and _all_f32(floats):        # execute's float32-as-is path, without its lookups
            sim.depth += 1
            try:
                return sim._as_is(name, func, args, kwargs)
            finally:
                sim.depth -= 1

        def naive(a, k):
            call = _naive_call(name, a, k)
            return None if call is None else (lambda: (call(), f"opkit_naive.{name}"))
        sim.depth += 1
        try:
            out, _, _, _ = sim.execute(name, func, args, kwargs, naive=naive, floats=floats)
        finally:
            sim.depth -= 1
        return out


@contextmanager
def _null():
    yield


def _tensor_operands(args, kwargs) -> bool:
    """Every operand a tensor: PyTorch's 16-bit kernels round a Python float operand to 16 bits first, the FP32
    computation does not (x + 0.1 differs), so calls with a number keep the FP32 path."""
    return not kwargs and all(isinstance(a, torch.Tensor) for a in args)


def _all_f32(floats: list) -> bool:
    for t in floats:             # a plain loop: asked for every op (a generator in all() cost more)
        if t.dtype != F32:
            return False
    return True


def _params_in(m: nn.Module | None, dt: torch.dtype) -> bool:
    """Every floating parameter and buffer of ``m`` (and its children) a policy may cast is already ``dt``."""
    if m is None:
        return True
    if LEAN_DISPATCH and not m._modules:      # a leaf (most atomic modules): its own two dicts, no modules() walk
        for d in (m._parameters, m._buffers):
            for v in d.values():
                if v is not None and v.dtype in _LOW and v.dtype != dt:
                    return False
        return True
    for sub in m.modules():
        for d in (sub._parameters, sub._buffers):
            for v in d.values():
                if v is not None and v.dtype in _LOW and v.dtype != dt:
                    return False
    return True


def _no_params(m: nn.Module | None) -> bool:
    return m is None or next(iter(m.parameters()), None) is None


@contextmanager
def _params_as(m: nn.Module | None, io: torch.dtype, cdt: torch.dtype, rnd: bool, cache: dict | None = None):
    """The module's floating parameters and buffers rounded to ``io`` and held in ``cdt`` for one call.
    ``cache`` (the Simulator's) keeps each rounded copy while its source tensor is unchanged (same storage and
    version counter): eval runs the same weights batch after batch, and rounding them was a third of the
    engine's own time on ConvNeXt."""
    if m is None:
        yield
        return
    saved = []
    try:
        for sub in m.modules():
            for kind in ("_parameters", "_buffers"):
                d = getattr(sub, kind)
                for k, v in d.items():
                    if v is not None and v.dtype in _LOW:
                        saved.append((sub, kind, k, v, v.data))
                        new = _cached_cast(v, io, cdt, rnd, cache)
                        if kind == "_parameters":
                            v.data = new
                        else:
                            d[k] = new
        yield
    finally:
        for sub, kind, k, v, data in reversed(saved):
            if kind == "_parameters":
                v.data = data
            else:
                getattr(sub, kind)[k] = v


def _cached_cast(t: torch.Tensor, io: torch.dtype, cdt: torch.dtype, rnd: bool, cache: dict | None):
    """``t`` (a parameter or buffer) rounded as ``_cast`` does, from ``cache`` while ``t`` is unchanged."""
    if cache is None or (t.dtype == io == cdt and not rnd):
        return _cast(t.detach(), io, cdt, rnd)
    key = (id(t), io, cdt, rnd)
    hit = cache.get(key)
    stamp = (t.data_ptr(), t._version, tuple(t.shape), t.dtype)
    if hit is not None and hit[0] == stamp and hit[1] is t:
        return hit[2]
    out = _cast(t.detach(), io, cdt, rnd)
    cache[key] = (stamp, t, out)
    return out
