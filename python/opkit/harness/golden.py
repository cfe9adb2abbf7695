"""Goldens from ``reference.py``: inputs upcast (fp16/bf16 -> fp32, fp32 -> fp64), results in fp64.

``reference.py`` defines ``reference(*inputs, **attrs)`` (required) and optionally
``naive(*inputs, **attrs)`` (the low-precision baseline, when the kernel cannot be built naive) and
``error_scale(*inputs, **attrs)`` (per output element, the magnitude of the terms summed to form it;
see standard.py). Without ``error_scale`` the scale is estimated: the reference is run in fp64 once per
floating input with that input perturbed by a relative ETA times random signs; the scale of output i is
``sum over inputs |y_i(perturbed) - y_i| / ETA``, i.e. the output's first-order sensitivity to a relative
error in each input (its componentwise condition times |y_i|). Any backward-stable kernel computing in a
precision u has errors of order u times that scale.
"""
from __future__ import annotations

from types import ModuleType

import torch

from ..toolchain.user_code import ReferenceError_, load_reference  # noqa: F401 - the harness's names for them

ETA = 2.0 ** -28          # relative perturbation: far above fp64 noise (2^-52), small enough to stay linear
UPCAST = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64}


def upcast(t: torch.Tensor) -> torch.Tensor:
    return t.to(UPCAST[t.dtype]) if t.dtype in UPCAST else t


def as_tuple(res) -> tuple:
    if isinstance(res, torch.Tensor):
        return (res,)
    if isinstance(res, (tuple, list)):
        return tuple(res)
    raise TypeError(f"expected a tensor or a tuple of tensors, got {type(res).__name__}")


def _call(mod: ModuleType, fn: str, inputs, attrs) -> tuple:
    try:
        with torch.no_grad():
            return as_tuple(getattr(mod, fn)(*inputs, **attrs))
    except Exception as e:
        raise ReferenceError_(f"{getattr(mod, '__file__', 'reference.py')}: {fn}() raised "
                              f"{type(e).__name__}: {e}") from e


def golden(mod: ModuleType, inputs, attrs) -> tuple[torch.Tensor, ...]:
    """reference() on upcast inputs, as float64 tensors (integer outputs keep their dtype)."""
    outs = _call(mod, "reference", [upcast(x) for x in inputs], attrs)
    return tuple(o.detach().to(torch.float64) if o.is_floating_point() else o.detach() for o in outs)


def fp32_nonfinite(mod: ModuleType, inputs, attrs, gold: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """NaN/inf semantics are PyTorch's FP32 op's: where reference() on the inputs as float32 gives NaN or
    +-inf, so does the golden (the fp64 golden of an fp32 case could differ, e.g. inf - inf inside the op
    against a finite fp64 path). fp16/bf16 goldens are already that FP32 run."""
    sem = _call(mod, "reference", [x.float() if x.is_floating_point() else x for x in inputs], attrs)
    out = []
    for g, s in zip(gold, sem):
        if g.is_floating_point() and s.is_floating_point() and s.shape == g.shape:
            g = torch.where(torch.isfinite(s), g, s.detach().to(torch.float64))
        out.append(g)
    return tuple(out) + tuple(gold[len(out):])


def naive(mod: ModuleType, inputs, attrs) -> tuple[torch.Tensor, ...] | None:
    """reference.py's optional naive() on the raw (low-precision) inputs; None when it has none."""
    if not callable(getattr(mod, "naive", None)):
        return None
    return _call(mod, "naive", list(inputs), attrs)


def error_scale(mod: ModuleType, inputs, attrs, gold: tuple[torch.Tensor, ...], seed: int = 0):
    """Per-output error scales (fp64 tensors, None for non-float outputs); see the module docstring."""
    if callable(getattr(mod, "error_scale", None)):
        s = _call(mod, "error_scale", [upcast(x) for x in inputs], attrs)
        return tuple(x.detach().to(torch.float64).abs() if x is not None else None for x in s)
    x64 = [x.detach().to(torch.float64) if x.is_floating_point() else x for x in inputs]
    base = _call(mod, "reference", x64, attrs)
    scales = [torch.zeros_like(b, dtype=torch.float64) if b.is_floating_point() else None for b in base]
    g = torch.Generator().manual_seed(seed)
    for k, x in enumerate(x64):
        if not x.is_floating_point():
            continue
        # Random signs as float64: a float32 1 + 2^-28 would round back to 1.
        sign = (torch.rand(x.shape, generator=g, dtype=torch.float64) < 0.5).to(torch.float64) * 2.0 - 1.0
        pert = list(x64)
        pert[k] = x * (1.0 + ETA * sign)
        outs = _call(mod, "reference", pert, attrs)
        for j, (o, b) in enumerate(zip(outs, base)):
            if scales[j] is not None:
                scales[j] += (o.to(torch.float64) - b.to(torch.float64)).abs() / ETA
    # Never below the value itself (an unperturbed constant term still has its own magnitude).
    return tuple(torch.maximum(s, b.to(torch.float64).abs()) if s is not None else None
                 for s, b in zip(scales, base))
