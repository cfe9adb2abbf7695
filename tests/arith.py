"""Arithmetic that does not depend on the CPU, and a switch that makes the CPU's 16-bit kernels round differently.

Why: PyTorch picks its CPU kernels at run time (oneDNN / MKL / ATen, AVX2 or AVX-512, with or without BF16/FP16
units), and float16/bfloat16 matmuls, float32 reductions and MKL's float32 sqrt/exp do not give the same bits on
every CPU (seen: an AMD EPYC with AVX-512 BF16 against the Intel host that recorded AMCT's results). A result
recorded on one CPU and compared bit for bit on another needs arithmetic that is the same everywhere.

- :class:`Float64Arithmetic`: every floating-point op on float16/bfloat16/float32 tensors is computed in float64
  and rounded once to the dtype PyTorch would have given. Each op's result is then the exact result rounded once
  (up to float64's own rounding, 2^-53 relative: it changes a 16-bit result only when the exact value lies within
  2^-42 of a rounding boundary, a float32 one within 2^-29), whichever kernels the CPU has. AMCT's recordings and
  opkit's runs compared with them both run under it, so the comparison is exact and holds on any CPU.
- :class:`PerturbLowPrecision`: a test-only switch (``OPKIT_TEST_PERTURB16=1``, see conftest.py) that moves the
  outputs of every float16/bfloat16 matmul and convolution by one ulp at random, i.e. a CPU whose 16-bit kernels
  round differently; a test that still passes under it does not depend on this CPU's kernels.
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

FLOATS = (torch.float16, torch.bfloat16, torch.float32)
aten = torch.ops.aten
# exact whatever the CPU (copies, conversions, selection, comparisons): run natively, as they are
EXACT = {aten._to_copy.default, aten.copy_.default, aten.clone.default, aten.detach.default, aten.lift_fresh.default,
         aten._local_scalar_dense.default, aten.item.default, aten.empty_like.default, aten.zeros_like.default,
         aten.ones_like.default, aten.full_like.default, aten.fill_.Scalar, aten.zero_.default}


def _is_float(t) -> bool:
    return isinstance(t, torch.Tensor) and t.dtype in FLOATS


def _widen(t):
    return t.to(torch.float64) if _is_float(t) else t


def _meta(t):
    return t.to("meta") if isinstance(t, torch.Tensor) else t


class Float64Arithmetic(TorchDispatchMode):
    """Every floating op computed in float64 and rounded once to PyTorch's result dtype (see the module doc)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat = [*args, *kwargs.values()]
        tensors = [t for a in flat for t in (a if isinstance(a, (list, tuple)) else [a])]
        schema = func._schema
        views = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        if func in EXACT or views or not any(_is_float(t) for t in tensors):
            return func(*args, **kwargs)
        wide_args, wide_kwargs = tree_map(_widen, args), tree_map(_widen, kwargs)
        mutated = [i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write]
        if mutated:                 # in place / out=: run on float64 copies, write the rounded results back
            func(*wide_args, **wide_kwargs)
            written = []
            for i in mutated:
                name = schema.arguments[i].name
                orig = kwargs[name] if name in kwargs else args[i]
                wide = wide_kwargs[name] if name in wide_kwargs else wide_args[i]
                orig.copy_(wide.to(torch.float32) if wide.dtype == torch.float64 else wide)
                written.append(orig)
            return written[0] if len(schema.returns) == 1 else tuple(written[:len(schema.returns)])
        try:
            want = func(*tree_map(_meta, args), **tree_map(_meta, kwargs))     # the dtypes PyTorch would give
        except (NotImplementedError, RuntimeError):
            want = func(*args, **kwargs)
        got = func(*wide_args, **wide_kwargs)

        def back(w, g):
            # through float32 always: float64 -> float16 goes direct in ATen's vector kernels and through float
            # in its scalar ones (two roundings), and those differ at ties
            return g.to(torch.float32).to(w.dtype) if isinstance(g, torch.Tensor) and g.dtype != w.dtype else g
        if isinstance(got, torch.Tensor):
            return back(want, got)
        return type(got)(back(w, g) for w, g in zip(want, got))


LOW = (torch.float16, torch.bfloat16)
MATMULS = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default, aten.convolution.default,
           aten.addmv.default, aten.mv.default, aten._convolution.default}


class PerturbLowPrecision(TorchDispatchMode):
    """Each float16/bfloat16 matmul/conv output element moves one ulp up or down with probability 1/2 (seeded)."""

    def __init__(self, seed: int = 0):
        super().__init__()
        self.gen = torch.Generator().manual_seed(seed)
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in MATMULS and isinstance(out, torch.Tensor) and out.dtype in LOW and out.numel():
            self.calls += 1
            out = one_ulp(out, self.gen)
        return out


def one_ulp(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """t with each finite element moved to a neighbouring 16-bit value at random (half of them left alone)."""
    step = torch.randint(-1, 2, t.shape, generator=gen, dtype=torch.int16)
    step = torch.where(torch.rand(t.shape, generator=gen) < 0.5, step, torch.zeros_like(step))
    bits = t.contiguous().view(torch.int16)
    # for negative values the bit pattern runs backwards; either way it is the neighbouring representable value
    moved = (bits.to(torch.int32) + step).to(torch.int16).view(t.dtype)
    keep = ~torch.isfinite(t) | (t == 0) | ~torch.isfinite(moved)
    return torch.where(keep, t, moved).reshape(t.shape)


def cpu_description() -> str:
    """The CPU model, its vector extensions and the kernels torch picks (what a recording was made on)."""
    import platform
    model, flags = platform.processor() or platform.machine(), []
    try:
        for line in open("/proc/cpuinfo"):
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() in ("flags", "Features"):
                flags = [f for f in value.split() if f.startswith(("avx", "amx", "f16c", "fma", "asimd", "sve"))]
                break
    except OSError:
        pass
    return f"{model} [{' '.join(flags)}], torch CPU capability {torch.backends.cpu.get_cpu_capability()}"
