"""``opkit.patch(model)``: swap precision-sensitive modules for opkit-backed ones, reversibly.

A replacement module holds the original's parameters (the same ``Parameter`` objects, under the same
names), so ``state_dict()`` keys and values do not change, optimizers keep working, and
``unpatch`` puts the original modules back. Built-in mappings:

=====================================  ==========================================================
module                                 opkit op
=====================================  ==========================================================
``nn.LayerNorm`` (any normalized_shape; several trailing dims are flattened into one row)
                                       ``layer_norm_fp32`` (no affine: ones / zeros)
ConvNeXt-style channels-first LayerNorm (a module with ``data_format="channels_first"``, or a
``LayerNorm2d``)                       ``layer_norm_fp32`` over dim 1 (moved last and back)
``nn.RMSNorm``                         ``rms_norm_fp32`` (eps=None: finfo(dtype).eps, as PyTorch)
``nn.Softmax(dim)``                    ``softmax_fp32``
``nn.GELU(approximate)``               ``gelu_fp32``
``nn.SiLU``                            ``silu_fp32``
=====================================  ==========================================================

``register_mapping(ModuleType, factory)`` adds or overrides a mapping. ``variant="naive"`` uses
``torch.ops.opkit_naive`` (the same kernels computing in the I/O dtype: the "naive AMP" baseline).
Docs: docs/patch.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

import torch
import torch.nn as nn

from .errors import OpkitError

__all__ = ["patch", "unpatch", "register_mapping", "PatchReport", "CannotPatch", "OpkitModule", "Ops"]

VARIANTS = {"opkit": "opkit", "naive": "opkit_naive"}   # variant -> torch.ops namespace

# Modules whose type name contains one of these are listed as "not swapped: no mapping" when no mapping
# matches them, so a report also shows the precision-sensitive layers opkit left alone.
_SUSPECT_NAMES = ("norm", "softmax", "gelu", "silu", "swish")


class CannotPatch(Exception):
    """Raised by a mapping factory: the module matched but cannot be swapped (the message says why)."""


class Ops:
    """Op lookup for one variant: ``ops.layer_norm_fp32`` is ``torch.ops.<namespace>.layer_norm_fp32``."""

    def __init__(self, variant: str):
        if variant not in VARIANTS:
            raise OpkitError(f"opkit.patch: variant={variant!r} is not one of {', '.join(VARIANTS)}")
        self.variant = variant
        self.namespace = VARIANTS[variant]

    def has(self, op: str) -> bool:
        return hasattr(getattr(torch.ops, self.namespace), op)

    def __getattr__(self, op: str):
        if op.startswith("_"):
            raise AttributeError(op)
        if not self.has(op):
            _load_on_demand(op)         # only the ops a model needs are built and loaded
        if not self.has(op):
            raise CannotPatch(f"torch.ops.{self.namespace}.{op} is not registered (call opkit.load(), or build "
                              "the op)")
        return getattr(getattr(torch.ops, self.namespace), op)


class OpkitModule(nn.Module):
    """Base of every replacement. ``opkit_original`` is the module it replaced (kept outside
    ``_modules`` so it adds no state_dict keys and is not visited twice)."""

    opkit_op: str = ""

    def __init__(self, original: nn.Module, op, variant: str):
        super().__init__()
        object.__setattr__(self, "opkit_original", original)
        self.op = op                        # an OpOverloadPacket; torch.compile traces calls to it
        self.variant = variant
        self.training = original.training

    def adopt(self, original: nn.Module, names: Iterable[str]) -> None:
        """Hold ``original``'s parameters/buffers under the same names (same objects)."""
        for name in names:
            value = getattr(original, name, None)
            if name in original._parameters:
                self.register_parameter(name, original._parameters[name])
            elif name in original._buffers:
                self.register_buffer(name, original._buffers[name],
                                     persistent=name not in original._non_persistent_buffers_set)
            else:
                setattr(self, name, value)

    def extra_repr(self) -> str:
        return f"op={VARIANTS[self.variant]}.{self.opkit_op}, replaces={type(self.opkit_original).__name__}"


def _ones_zeros(weight, bias, n: int, x: torch.Tensor):
    w = weight if weight is not None else torch.ones(n, dtype=x.dtype, device=x.device)
    b = bias if bias is not None else torch.zeros(n, dtype=x.dtype, device=x.device)
    return w, b


class LayerNorm(OpkitModule):
    """``layer_norm_fp32`` over the trailing ``normalized_shape`` (flattened into one row when it has
    several dims), or over dim 1 for channels-first layouts."""

    opkit_op = "layer_norm_fp32"

    def __init__(self, original: nn.Module, ops: Ops, normalized_shape, eps: float, channels_first: bool):
        super().__init__(original, ops.layer_norm_fp32, ops.variant)
        self.adopt(original, ("weight", "bias"))
        self.normalized_shape = tuple(normalized_shape)
        self.eps = float(eps)
        self.channels_first = channels_first
        self.numel = math.prod(self.normalized_shape)
        if hasattr(original, "elementwise_affine"):
            self.elementwise_affine = original.elementwise_affine
        if hasattr(original, "data_format"):
            self.data_format = original.data_format

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = _ones_zeros(self.weight, self.bias, self.numel, x)
        if self.channels_first:
            # the op normalises the last dim: move C there and back (one copy each way)
            y = self.op(x.movedim(1, -1).contiguous(), w, b, self.eps)
            return y.movedim(-1, 1)
        k = len(self.normalized_shape)
        if k == 1:
            return self.op(x, w, b, self.eps)
        lead = x.shape[:-k]
        y = self.op(x.reshape(*lead, self.numel), w.reshape(-1), b.reshape(-1), self.eps)
        return y.reshape(x.shape)


class RMSNorm(OpkitModule):
    opkit_op = "rms_norm_fp32"

    def __init__(self, original: nn.RMSNorm, ops: Ops):
        super().__init__(original, ops.rms_norm_fp32, ops.variant)
        self.adopt(original, ("weight",))
        self.normalized_shape = tuple(original.normalized_shape)
        self.eps = original.eps
        self.elementwise_affine = original.elementwise_affine
        self.numel = math.prod(self.normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # eps=None means finfo(input dtype).eps, as in F.rms_norm
        eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
        w = self.weight if self.weight is not None else torch.ones(self.numel, dtype=x.dtype, device=x.device)
        k = len(self.normalized_shape)
        if k == 1:
            return self.op(x, w, eps)
        y = self.op(x.reshape(*x.shape[:-k], self.numel), w.reshape(-1), eps)
        return y.reshape(x.shape)


class Softmax(OpkitModule):
    opkit_op = "softmax_fp32"

    def __init__(self, original: nn.Softmax, ops: Ops):
        super().__init__(original, ops.softmax_fp32, ops.variant)
        self.dim = int(original.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x, self.dim)


class GELU(OpkitModule):
    opkit_op = "gelu_fp32"

    def __init__(self, original: nn.GELU, ops: Ops):
        super().__init__(original, ops.gelu_fp32, ops.variant)
        self.approximate = original.approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x, self.approximate)


class SiLU(OpkitModule):
    opkit_op = "silu_fp32"

    def __init__(self, original: nn.SiLU, ops: Ops):
        super().__init__(original, ops.silu_fp32, ops.variant)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x)


# ----------------------------------------------------------------------------------------------
# mappings: (does it match?, factory). Factories raise CannotPatch with the reason.

Factory = Callable[[nn.Module, Ops], nn.Module]


def _layer_norm(m: nn.LayerNorm, ops: Ops) -> nn.Module:
    return LayerNorm(m, ops, m.normalized_shape, m.eps, channels_first=False)


def _channels_first_layer_norm(m: nn.Module, ops: Ops) -> nn.Module:
    shape = getattr(m, "normalized_shape", None)
    shape = (shape,) if isinstance(shape, int) else tuple(shape) if shape is not None else (m.weight.numel(),)
    if len(shape) != 1:
        raise CannotPatch(f"channels-first LayerNorm over {len(shape)} dims {shape}; only one (C) is supported")
    eps = getattr(m, "eps", None)
    if eps is None:
        raise CannotPatch("channels-first LayerNorm without an `eps` attribute")
    fmt = getattr(m, "data_format", "channels_first")
    return LayerNorm(m, ops, shape, eps, channels_first=fmt == "channels_first")


def _softmax(m: nn.Softmax, ops: Ops) -> nn.Module:
    if m.dim is None:
        raise CannotPatch("nn.Softmax(dim=None) picks its dim from the input's rank (legacy); give dim explicitly")
    return Softmax(m, ops)


_BUILTIN: dict[type, Factory] = {
    nn.LayerNorm: _layer_norm,
    nn.RMSNorm: lambda m, ops: RMSNorm(m, ops),
    nn.Softmax: _softmax,
    nn.GELU: lambda m, ops: GELU(m, ops),
    nn.SiLU: lambda m, ops: SiLU(m, ops),
}
_USER: dict[type, Factory] = {}


def register_mapping(module_type: type, factory: Factory) -> None:
    """Swap modules of exactly ``module_type`` for ``factory(module, ops)``.

    ``ops`` resolves op names for the chosen variant (``ops.my_op`` is ``torch.ops.opkit.my_op`` or
    ``torch.ops.opkit_naive.my_op``). The factory returns the replacement, which must hold the
    original's parameters under the same names (patch checks the state_dict keys), or raises
    ``CannotPatch("why")``. Overrides a built-in mapping for the same type.
    """
    if not (isinstance(module_type, type) and issubclass(module_type, nn.Module)):
        raise OpkitError(f"opkit.register_mapping: module_type must be an nn.Module subclass; got {module_type!r}")
    if not callable(factory):
        raise OpkitError(f"opkit.register_mapping: factory for {module_type.__name__} is not callable")
    _USER[module_type] = factory


def is_channels_first_ln(m: nn.Module) -> bool:
    # ConvNeXt's own LayerNorm (data_format attr) and LayerNorm2d (timm, detectron2) normalise dim 1
    fmt = getattr(m, "data_format", None)
    named = type(m).__name__ == "LayerNorm2d"
    return (fmt in ("channels_first", "channels_last") or named) and isinstance(getattr(m, "weight", None),
                                                                                  nn.Parameter)


def find_mapping(m: nn.Module) -> tuple[Factory | None, str]:
    """(factory, "") or (None, reason it is not swapped) or (None, "") when the module is no candidate."""
    t = type(m)
    if t in _USER:
        return _USER[t], ""
    if t in _BUILTIN:
        return _BUILTIN[t], ""
    if is_channels_first_ln(m):
        return _channels_first_layer_norm, ""
    for base in t.__mro__[1:]:
        if base in _BUILTIN or base in _USER:
            if t.forward is base.forward:   # a subclass that only changes __init__: same maths
                return (_USER.get(base) or _BUILTIN[base]), ""
            return None, (f"subclass of {base.__module__}.{base.__name__} with its own forward(); "
                          f"register_mapping({t.__name__}, factory) to patch it")
    if any(s in t.__name__.lower() for s in _SUSPECT_NAMES):
        return None, f"no opkit mapping for {t.__name__} (register_mapping to add one)"
    return None, ""


# ----------------------------------------------------------------------------------------------
# the walk

@dataclass
class PatchReport:
    """What ``patch`` did (or, with dry_run, would do)."""

    swapped: list[tuple[str, str, str]] = field(default_factory=list)      # (path, module type, op)
    not_swapped: list[tuple[str, str, str]] = field(default_factory=list)  # (path, module type, reason)
    variant: str = "opkit"
    dry_run: bool = False

    @property
    def swapped_paths(self) -> list[str]:
        return [p for p, _, _ in self.swapped]

    @property
    def not_swapped_paths(self) -> list[str]:
        return [p for p, _, _ in self.not_swapped]

    def __str__(self) -> str:
        verb = "would swap" if self.dry_run else "swapped"
        lines = [f"opkit.patch ({self.variant}): {verb} {len(self.swapped)} module(s), "
                 f"left {len(self.not_swapped)}"]
        lines += [f"  {verb}  {p or '<root>'}  {t} -> {op}" for p, t, op in self.swapped]
        lines += [f"  kept     {p or '<root>'}  {t}: {why}" for p, t, why in self.not_swapped]
        return "\n".join(lines)


_HOOK_DICTS = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks", "_backward_pre_hooks")


def patch(model: nn.Module, ops: Iterable[str] | None = None, dry_run: bool = False,
          variant: str = "opkit") -> PatchReport:
    """Swap matching submodules of ``model`` in place for opkit-backed ones; returns a PatchReport.

    ``ops``: only use these opkit ops (snake names, e.g. ``["layer_norm_fp32"]``); None = all.
    ``dry_run``: only report. ``variant``: "opkit" (FP32 compute) or "naive" (compute in the I/O dtype).
    """
    if not isinstance(model, nn.Module):
        raise OpkitError(f"opkit.patch: expected an nn.Module; got {type(model).__name__}")
    lookup = Ops(variant)
    allowed = None if ops is None else set([ops] if isinstance(ops, str) else ops)
    report = PatchReport(variant=variant, dry_run=dry_run)
    done: dict[int, nn.Module] = {}         # id(original) -> replacement: shared modules stay shared

    def visit(parent: nn.Module, prefix: str) -> None:
        for name, child in list(parent._modules.items()):
            if child is None:
                continue
            path = f"{prefix}{name}"
            if isinstance(child, OpkitModule):
                report.not_swapped.append((path, type(child).__name__, "already patched"))
                continue
            if id(child) in done:
                if not dry_run:
                    setattr(parent, name, done[id(child)])
                continue
            rep = _replacement(child, path, lookup, allowed, report)
            if rep is None:
                visit(child, path + ".")
                continue
            done[id(child)] = rep
            if not dry_run:
                setattr(parent, name, rep)

    factory, why = find_mapping(model)
    if factory is not None or why:
        report.not_swapped.append(("", type(model).__name__, "the root module cannot be replaced in place; "
                                                             "patch a container holding it"))
    visit(model, "")
    return report


def _replacement(m: nn.Module, path: str, ops: Ops, allowed: set[str] | None,
                 report: PatchReport) -> nn.Module | None:
    factory, why = find_mapping(m)
    tname = type(m).__name__
    if factory is None:
        if why:
            report.not_swapped.append((path, tname, why))
        return None
    try:
        rep = factory(m, ops)
    except CannotPatch as e:
        report.not_swapped.append((path, tname, str(e)))
        return None
    op = getattr(rep, "opkit_op", "") or type(rep).__name__
    if allowed is not None and op not in allowed:
        report.not_swapped.append((path, tname, f"{op} is not in ops={sorted(allowed)}"))
        return None
    before, after = list(m.state_dict().keys()), list(rep.state_dict().keys())
    if sorted(before) != sorted(after):
        raise OpkitError(f"opkit.patch: the mapping for {tname} at {path!r} changes state_dict keys "
                         f"{before} -> {after}; the replacement must hold the original's parameters under "
                         "the same names")
    if not isinstance(rep, OpkitModule):    # user factories may return any module: remember the original
        object.__setattr__(rep, "opkit_original", m)
    for d in _HOOK_DICTS:                   # hooks keep firing (shared dicts: later hooks apply to both)
        if hasattr(m, d):
            setattr(rep, d, getattr(m, d))
    report.swapped.append((path, tname, op))
    return rep


_unavailable: dict[str, str] = {}      # op -> why loading it on demand failed (asked once per process)


def _load_on_demand(op: str) -> None:
    """Register one op (workspace, else bundled; built into the cache on first use) when a mapping asks
    for it, so patching a model builds just the ops it uses, not the whole bundled library. A failure is
    remembered: asking again (every simulator run asks) would re-read every op.yaml of the workspace."""
    from . import loader
    if op in loader.loaded():
        return
    if op in _unavailable:
        raise CannotPatch(_unavailable[op])
    try:
        loader.load(ops=[op], backward=False)     # its backward op is built on the first backward call
    except OpkitError as e:                 # not built, not an op anywhere, build failed: say why
        _unavailable[op] = (f"torch.ops.opkit.{op}: {e} (not retried in this process: call opkit.load() "
                            "after building it)")
        raise CannotPatch(_unavailable[op]) from e


def unpatch(model: nn.Module) -> list[str]:
    """Put back every module ``patch`` replaced in ``model``; returns the restored paths."""
    restored: list[str] = []

    def visit(parent: nn.Module, prefix: str) -> None:
        for name, child in list(parent._modules.items()):
            if child is None:
                continue
            original = child.__dict__.get("opkit_original")
            if original is not None:
                # parameters may have been re-assigned on the replacement (load_state_dict(assign=True),
                # to(...) with overwrite): hand the current ones back
                for pname, p in child._parameters.items():
                    if pname in original._parameters:
                        original._parameters[pname] = p
                for bname, b in child._buffers.items():
                    if bname in original._buffers:
                        original._buffers[bname] = b
                original.train(child.training)
                setattr(parent, name, original)
                restored.append(prefix + name)
            else:
                visit(child, prefix + name + ".")

    visit(model, "")
    return restored

