"""Autograd for opkit ops, registered from the op spec.

``formulas(spec)`` says how an op differentiates; ``opkit.registration.register_autograd`` registers it
(``opkit.load()`` does, for each op it loads). Three cases:

* the spec has a ``backward:`` section -> the backward is another opkit kernel (FP32 compute):
  ``setup_context`` keeps what the section's ``args`` name (inputs, outputs, attrs) and the backward
  calls ``torch.ops.opkit.<backward.op>``; inputs missing from ``backward.grads`` get no gradient;
* no ``backward:`` but a ``reference.py`` -> fallback: the gradient is the autograd of the op's own
  PyTorch reference, recomputed in FP32 from the saved inputs (documented in docs/patch.md);
* a backward op itself (``*_backward``) or no reference -> not differentiable: backward raises an
  OpkitError naming the op, instead of PyTorch's silent "no autograd kernel" warning.

The formulas follow ``torch.library.register_autograd``'s contract (setup_context(ctx, inputs, output),
backward(ctx, *grads) -> one gradient per argument); registration runs them in a torch.autograd.Function
below the C++ Autograd kernel, so they compose with the Autocast kernels (autocast casts first, then
autograd records) and with torch.compile (AOT autograd traces ``backward``; the backward op has its own
Meta kernel).
"""
from __future__ import annotations

import importlib.util
from typing import Any, Callable

import torch

from .errors import OpkitError
from .opspec import OpSpec


def formulas(spec: OpSpec, namespace: str = "opkit",
             load_missing: Callable[[str], None] | None = None) -> tuple[str, Callable, Callable]:
    """(kind, setup_context, backward) of ``torch.ops.<namespace>.<spec.snake>``: kind "kernel" (a backward
    op), "reference" (autograd of reference.py) or "none". opkit.registration registers them.
    ``load_missing(op)``: called on the first backward when the backward op is not registered yet
    (opkit.load passes one that builds and loads it: opkit.patch loads forward ops only)."""
    if spec.backward is not None:
        return ("kernel", *_kernel_backward(spec, namespace, load_missing))
    if spec.reference_file.is_file() and not spec.snake.endswith("_backward"):
        return ("reference", *_reference_backward(spec))
    return ("none", *_no_backward(spec, namespace))


# ----------------------------------------------------------------------------------------------
# backward through an opkit kernel

def _kernel_backward(spec: OpSpec, namespace: str, load_missing) -> tuple[Callable, Callable]:
    bw = spec.backward
    in_index = {i.name: n for n, i in enumerate(spec.inputs)}
    out_index = {o.name: n for n, o in enumerate(spec.outputs)}
    attr_index = {a.name: len(spec.inputs) + n for n, a in enumerate(spec.attrs)}

    # Each backward arg becomes a recipe: ("grad", output idx) | ("saved", slot) | ("attr", value slot).
    saved_sources: list[tuple[str, int]] = []       # ("in"|"out", index), in save order
    recipe: list[tuple[str, int]] = []
    for arg in bw.args:
        kind, _, name = arg.partition(".")
        if not name:                                # a bare forward input name
            kind, name = "in", arg
        if kind == "grad":
            recipe.append(("grad", out_index[name]))
        elif kind == "attr":
            recipe.append(("attr", attr_index[name]))
        else:
            src = ("in", in_index[name]) if kind == "in" else ("out", out_index[name])
            if src not in saved_sources:
                saved_sources.append(src)
            recipe.append(("saved", saved_sources.index(src)))
    attr_slots = sorted({i for k, i in recipe if k == "attr"})
    single_output = len(spec.outputs) == 1

    def bw_op():
        # looked up at call time: the backward op may load after the forward (opkit.patch loads forward
        # ops only; a bundled backward op is built and loaded on the first backward)
        packet = getattr(getattr(torch.ops, namespace), bw.op, None)
        if packet is None and load_missing is not None:
            try:
                load_missing(bw.op)
            except OpkitError:
                pass                                # not an op anywhere: the error below says what to do
            packet = getattr(getattr(torch.ops, namespace), bw.op, None)
        if packet is None:
            raise OpkitError(f"backward of {namespace}::{spec.snake}: torch.ops.{namespace}.{bw.op} is not "
                             f"registered (op.yaml backward.op in {spec.dir}); build and load it")
        return packet.default

    def grad_slots() -> list[tuple[str, int]]:
        # forward input -> index of the backward op's output, from the backward op's schema names
        returns = [r.name for r in bw_op()._schema.returns]
        slots = []
        for inp, out in bw.grads.items():
            if len(returns) == 1 and len(bw.grads) == 1:
                slots.append((inp, 0))              # single returns are unnamed in the schema
                continue
            if out not in returns:
                raise OpkitError(f"op.yaml backward.grads of {spec.snake} ({spec.dir}): {out!r} is not an output "
                                 f"of {namespace}::{bw.op} (outputs: {', '.join(returns)})")
            slots.append((inp, returns.index(out)))
        return slots

    def setup_context(ctx, inputs, output):
        outs = (output,) if single_output else tuple(output)
        ctx.save_for_backward(*[inputs[i] if k == "in" else outs[i] for k, i in saved_sources])
        ctx.attrs = {i: inputs[i] for i in attr_slots}
        ctx.out_meta = [(o.shape, o.dtype, o.device) for o in outs]

    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        args: list[Any] = []
        for kind, i in recipe:
            if kind == "grad":
                g = grads[i]
                if g is None:                       # output unused downstream
                    shape, dtype, device = ctx.out_meta[i]
                    g = torch.zeros(shape, dtype=dtype, device=device)
                args.append(g.contiguous())
            elif kind == "saved":
                args.append(saved[i])
            else:
                args.append(ctx.attrs[i])
        result = bw_op()(*args)
        result = (result,) if isinstance(result, torch.Tensor) else tuple(result)
        out: list[Any] = [None] * (len(spec.inputs) + len(spec.attrs))
        for inp, j in grad_slots():
            if ctx.needs_input_grad[in_index[inp]]:
                out[in_index[inp]] = result[j]
        return tuple(out)

    return setup_context, backward


# ----------------------------------------------------------------------------------------------
# fallback: autograd of the op's PyTorch reference, in FP32

def load_reference(spec: OpSpec) -> Callable:
    """``reference(*inputs, **attrs)`` from the op's reference.py."""
    path = spec.reference_file
    mod_spec = importlib.util.spec_from_file_location(f"opkit_reference_{spec.snake}", path)
    if mod_spec is None or mod_spec.loader is None:
        raise OpkitError(f"{path}: cannot import the op's reference")
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    fn = getattr(module, "reference", None)
    if fn is None:
        raise OpkitError(f"{path}: defines no function `reference(*inputs, **attrs)`")
    return fn


def _reference_backward(spec: OpSpec) -> tuple[Callable, Callable]:
    n_in = len(spec.inputs)
    attr_names = [a.name for a in spec.attrs]
    cache: list[Callable] = []

    def reference() -> Callable:
        if not cache:
            cache.append(load_reference(spec))
        return cache[0]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs[:n_in])
        ctx.attrs = dict(zip(attr_names, inputs[n_in:]))

    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        wanted = [i for i in range(n_in) if ctx.needs_input_grad[i] and saved[i].is_floating_point()]
        with torch.enable_grad():
            xs = [t.detach().float().requires_grad_(i in wanted) if t.is_floating_point() else t
                  for i, t in enumerate(saved)]
            outs = reference()(*xs, **ctx.attrs)
            outs = (outs,) if isinstance(outs, torch.Tensor) else tuple(outs)
            pairs = [(o, g.float()) for o, g in zip(outs, grads)
                     if g is not None and isinstance(o, torch.Tensor) and o.requires_grad]
            got = torch.autograd.grad([o for o, _ in pairs], [xs[i] for i in wanted], [g for _, g in pairs],
                                      allow_unused=True) if pairs and wanted else [None] * len(wanted)
        result: list[Any] = [None] * (n_in + len(attr_names))
        for i, g in zip(wanted, got):
            result[i] = None if g is None else g.to(saved[i].dtype)
        return tuple(result)

    return setup_context, backward


def _no_backward(spec: OpSpec, namespace: str) -> tuple[Callable, Callable]:
    def setup_context(ctx, inputs, output):
        pass

    def backward(ctx, *grads):
        raise OpkitError(f"{namespace}::{spec.snake} is not differentiable: its op.yaml ({spec.dir}) has no "
                         "backward section and the op has no reference.py to differentiate")

    return setup_context, backward
