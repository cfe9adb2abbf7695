"""Run a model on the CPU under a TorchDispatchMode and record the aten ops torch_npu would see.

The trap: on the CPU, CompositeImplicitAutograd ops are decomposed before any backend sees them, but
torch_npu registers ~47 of them directly (``scaled_dot_product_attention``, ``matmul``, ``softmax.int``...),
so they reach the NPU whole. A plain trace would report the CPU's pieces (sdpa becomes
``_scaled_dot_product_flash_attention_for_cpu``, which has no NPU kernel: a false fallback). So the forward
pass runs under ``torch.inference_mode()``, where the mode sees composite ops *before* decomposition, and
the mode decomposes them itself only when torch_npu has no kernel for them (classify.decide).
Backward (``backward=True``) runs with autograd, where the CPU's Autograd kernels have already decomposed
composite ops; docs/scan.md "Limits" says what that misses.
"""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from . import amp as amp_table
from .classify import DECOMPOSE, DEFAULT, IGNORE, base_name, decide, qualified, yaml_name
from .oplist import OpList


@dataclass
class Call:
    """One op as it reaches the backend."""
    op: str                          # aten::lgamma (qualified overload)
    status: str                      # supported | fallback | unknown
    reason: str
    phase: str                       # forward | backward
    input_tag: str                   # which example input (e.g. 1x3x640x640)
    shapes: tuple                    # per tensor argument, in order
    dtypes: tuple
    module: str                      # innermost module path ("" = the model itself)
    via: tuple[str, ...] = ()        # composite ops this call came from, outermost first
    amp_dtype: str | None = None     # lead floating input dtype when amp is simulated
    logits: bool = False             # a matmul whose output is (a view of) the model's output
    entry_args: dict = field(default_factory=dict)   # the entry op's arguments: tensors as shapes, scalars as is


class _ModuleStack:
    """Forward hooks on every submodule keep the innermost module path of the running op."""

    def __init__(self, model: torch.nn.Module | None):
        self.stack: list[str] = []
        self.handles = []
        if model is None:
            return
        for name, m in model.named_modules():
            self.handles.append(m.register_forward_pre_hook(lambda mod, args, n=name: self._push(n)))
            self.handles.append(m.register_forward_hook(lambda mod, args, out: self._pop(), always_call=True))

    def _push(self, name: str) -> None:        # hooks return None: a value would replace the input/output
        self.stack.append(name)

    def _pop(self) -> None:
        self.stack.pop()

    @property
    def current(self) -> str:
        return self.stack[-1] if self.stack else ""

    def close(self) -> None:
        for h in self.handles:
            h.remove()


class Tracer(TorchDispatchMode):
    def __init__(self, ops: OpList, overrides: dict[str, str], modules: _ModuleStack, *, amp: str | None):
        super().__init__()
        self.ops, self.overrides, self.modules, self.amp = ops, overrides, modules, amp
        self.calls: list[Call] = []
        self.phase, self.input_tag = "forward", ""
        self._via: list[str] = []
        self._entry_args: dict = {}
        self._autocast_depth = 0
        self._matmul_outs: list[tuple[weakref.ref, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        base = base_name(func._schema.name)
        casted = None
        if self.amp and self._autocast_depth == 0:
            casted = amp_table.cast(yaml_name(func), args, kwargs)
            if casted is not None:
                args, kwargs = casted
        ctx = self._autocast() if casted is not None else contextlib.nullcontext()
        with ctx:
            return self._dispatch(func, base, args, kwargs)

    @contextlib.contextmanager
    def _autocast(self):
        self._autocast_depth += 1         # autocast excludes itself while a listed op runs
        try:
            yield
        finally:
            self._autocast_depth -= 1

    def _dispatch(self, func, base, args, kwargs):
        d = decide(func, self.ops, self.overrides)
        if d.action == IGNORE:
            return func(*args, **kwargs)
        if d.action in (DECOMPOSE, DEFAULT) and qualified(func) in self._via:
            return func(*args, **kwargs)     # a default kernel that re-dispatches to itself (detach): it runs
        if d.action in (DECOMPOSE, DEFAULT):
            if not self._via:
                self._entry_args = _describe_args(func, args, kwargs)
            self._via.append(qualified(func))
            try:
                with self:               # re-enter the mode so the inner calls are classified too
                    if d.action == DECOMPOSE:
                        return func.decompose(*args, **kwargs)
                    return func._op_dk(getattr(torch._C.DispatchKey, d.key), *args, **kwargs)
            finally:
                self._via.pop()
        out = func(*args, **kwargs)
        self._record(func, base, d, args, kwargs, out)
        return out

    def _record(self, func, base, d, args, kwargs, out) -> None:
        tensors = _input_tensors(func, args, kwargs)
        floats = [t for t in tensors if t.is_floating_point()]
        call = Call(op=qualified(func), status=d.action, reason=d.reason, phase=self.phase,
                    input_tag=self.input_tag, shapes=tuple(tuple(t.shape) for t in tensors),
                    dtypes=tuple(str(t.dtype).removeprefix("torch.") for t in tensors),
                    module=self.modules.current if self.phase == "forward" else "(backward)",
                    via=tuple(self._via),
                    entry_args=self._entry_args if self._via else _describe_args(func, args, kwargs),
                    amp_dtype=str(floats[0].dtype).removeprefix("torch.") if floats else None)
        self.calls.append(call)
        if self.phase == "forward" and base in amp_table.MATMUL and isinstance(out, torch.Tensor):
                self._matmul_outs.append((weakref.ref(out), len(self.calls) - 1))

    def mark_logits(self, outputs) -> None:
        """Flag the matmul whose result the model returns (the logits matmul)."""
        outs = [t for t in tree_flatten(outputs)[0] if isinstance(t, torch.Tensor)]
        for ref, i in reversed(self._matmul_outs):
            t = ref()
            if t is not None and any(o is t or o._base is t for o in outs):
                self.calls[i].logits = True
                break
        self._matmul_outs.clear()


def _describe_args(func, args, kwargs) -> dict:
    """Schema argument name -> shape list (tensors) or plain value (numbers, bools, lists, None)."""
    out = {}
    for i, a in enumerate(func._schema.arguments):
        if a.is_out:
            continue
        v = args[i] if i < len(args) else kwargs.get(a.name, a.default_value)
        if isinstance(v, torch.Tensor):
            out[a.name] = {"shape": list(v.shape)}
        elif isinstance(v, (bool, int, float, str)) or v is None:
            out[a.name] = v
        elif isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, float)) for x in v):
            out[a.name] = list(v)
        else:
            out[a.name] = repr(v)
    return out


def _input_tensors(func, args, kwargs) -> list[torch.Tensor]:
    """The tensors an op reads: its arguments minus ``out=`` buffers."""
    outs = {a.name for a in func._schema.arguments if a.is_out}
    leaves = tree_flatten((args, {k: v for k, v in kwargs.items() if k not in outs}))[0]
    return [t for t in leaves if isinstance(t, torch.Tensor)]


def shape_tag(inputs) -> str:
    tensors = [t for t in tree_flatten(inputs)[0] if isinstance(t, torch.Tensor)]
    return ",".join("x".join(map(str, t.shape)) or "scalar" for t in tensors) or "(no tensors)"


def _as_args(inputs) -> tuple:
    return inputs if isinstance(inputs, tuple) else (inputs,)


def trace(model: Callable, inputs: Iterable, ops: OpList, *, overrides: dict[str, str], amp: str | None = None,
          backward: bool = False, fake: bool = False, progress: Callable[[str], None] | None = None) -> list[Call]:
    """Every backend-level call of ``model(*inp)`` for each example input ``inp`` (a tensor or a tuple).
    ``fake``: shapes only, under FakeTensorMode (no numerics; big inputs cost nothing; data-dependent
    ops such as ``nonzero`` or ``.item()`` raise)."""
    if amp not in (None, "npu-o1"):
        raise ValueError(f"amp={amp!r}: expected None or 'npu-o1'")
    if fake and backward:
        raise ValueError("fake=True traces the forward pass only; drop backward=True or fake=True")
    modules = _ModuleStack(model if isinstance(model, torch.nn.Module) else None)
    tracer = Tracer(ops, overrides, modules, amp=amp)
    try:
        for inp in inputs:
            args = _as_args(inp)
            tracer.input_tag = shape_tag(args)
            if progress:
                progress(f"tracing forward on {tracer.input_tag}")
            tracer.phase = "forward"
            with torch.inference_mode(), _fake_mode(fake) as fm, tracer:
                out = model(*(tree_map(lambda t: fm.from_tensor(t) if isinstance(t, torch.Tensor) else t, args)
                              if fm else args))
            tracer.mark_logits(out)
            del out
            if backward:
                if progress:
                    progress(f"tracing backward on {tracer.input_tag}")
                _backward(model, args, tracer)
    finally:
        modules.close()
    return tracer.calls


@contextlib.contextmanager
def _fake_mode(on: bool):
    if not on:
        yield None
        return
    import warnings

    from torch._subclasses.fake_tensor import FakeTensorMode
    with warnings.catch_warnings(), FakeTensorMode(allow_non_fake_inputs=True) as fm:   # parameters stay real
        # default kernels such as lgamma's touch data_ptr of the fake output; harmless, nothing is read
        warnings.filterwarnings("ignore", message="Accessing the data pointer of FakeTensor")
        yield fm


def _backward(model, args, tracer: Tracer) -> None:
    """Forward with autograd (not recorded), then backward of sum(outputs) recorded."""
    def req(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            return t.detach().requires_grad_(True)
        return t
    args = tree_map(req, args)
    with torch.enable_grad():
        out = model(*args)
        outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
        if not outs:
            raise ValueError("backward=True: the model's outputs do not require grad")
        loss = sum(o.float().sum() for o in outs)
        tracer.phase = "backward"
        try:
            with tracer:
                loss.backward()
        finally:
            tracer.phase = "forward"
