"""Arithmetic that is the same on every CPU, for results recorded on one machine and compared on another.

PyTorch picks its CPU kernels at run time (oneDNN / MKL / ATen; AVX2 or AVX-512, with or without BF16/FP16 units),
and they do not give the same bits everywhere: float16/bfloat16 matmuls, float32 convolutions (oneDNN's AVX2 and
AVX-512 kernels sum in another order: AMCT's zoo records moved by one float32 ulp), float32 reductions, MKL's
float32 sqrt on AMD. Under :class:`Float64Arithmetic` every floating-point ATen op on float16/bfloat16/float32
tensors is computed in float64 and rounded once to the dtype PyTorch would have given, so each op's result is
the exact one rounded once (up to float64's own rounding, 2^-53 relative: it can change a 16-bit result only
when the exact value lies within 2^-42 of a rounding boundary, a float32 one within 2^-29), whichever kernels
the CPU has. AMCT's recorded results (``python -m opkit.quant.amct --record``, tests/quantdata/) are made under
it, and opkit's side of the CI comparison runs under it too, so the comparison is bit for bit on any CPU.
Slower (Python dispatch per op, float64 kernels): for recordings and tests, not for users' runs.
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
STORAGE = {"set_", "resize_", "resize_as_", "as_strided_", "detach_", "requires_grad_"}   # re-point, not compute


def _is_float(t) -> bool:
    return isinstance(t, torch.Tensor) and t.dtype in FLOATS


def _widen(t):
    return t.to(torch.float64) if _is_float(t) else t


def _meta(t):
    return t.to("meta") if isinstance(t, torch.Tensor) else t


# What oneDNN / MKL compute, in an order that depends on the CPU's vector units: the ops a recording must not take
# from the CPU when the other side of the comparison computes the rest outside PyTorch (AMCT's classic flow does its
# calibration search and weight folding in numpy and its own code: those must stay as they are on both sides).
MATMULS = frozenset({aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default, aten.mv.default,
                     aten.addmv.default, aten.dot.default, aten.convolution.default, aten._convolution.default})
# the model-side ops a transformer's forward adds, summed or evaluated in a vector-width-dependent order by ATen
# (layer norm and softmax sum in vector lanes; GELU's erf comes from SLEEF per instruction set)
FORWARD = MATMULS | {aten.native_layer_norm.default, aten._softmax.default, aten._log_softmax.default,
                     aten.gelu.default}
# elementwise functions ATen takes from MKL's vector math library, which picks its code by the CPU's vendor: MKL's
# float32 sqrt is one ulp off on 17 % of values on an AMD EPYC and exact on an Intel Xeon (docs/quant.md), and
# `x ** 0.5` is the same kernel (ATen's pow special-cases 0.5 to sqrt). DMQ's balance factor is such a power.
VECTOR_MATH = frozenset({aten.sqrt.default, aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor})


class Float64Arithmetic(TorchDispatchMode):
    """Every floating op computed in float64 and rounded once to PyTorch's result dtype (see the module doc);
    ``only``: just these ops (e.g. MATMULS), the rest as the CPU computes them."""

    def __init__(self, only: frozenset | None = None):
        super().__init__()
        self.only = only

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.only is not None and func not in self.only:
            return func(*args, **kwargs)
        flat = [*args, *kwargs.values()]
        tensors = [t for a in flat for t in (a if isinstance(a, (list, tuple)) else [a])]
        schema = func._schema
        views = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        seeded = torch.Tag.nondeterministic_seeded in func.tags     # random draws: as the native run draws them
        moves = torch.Tag.inplace_view in func.tags or func.__name__.split(".")[0] in STORAGE   # no arithmetic
        if func.namespace != "aten" or func in EXACT or views or seeded or moves or \
                not any(_is_float(t) for t in tensors):
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
        try:        # the dtypes PyTorch would give: the native op is far cheaper than its meta kernel in Python
            want = func(*args, **kwargs)
        except (NotImplementedError, RuntimeError):
            want = func(*tree_map(_meta, args), **tree_map(_meta, kwargs))
        got = func(*wide_args, **wide_kwargs)

        def back(w, g):
            # through float32 always: float64 -> float16 goes direct in ATen's vector kernels and through float
            # in its scalar ones (two roundings), and those differ at ties
            return g.to(torch.float32).to(w.dtype) if isinstance(g, torch.Tensor) and g.dtype != w.dtype else g
        if isinstance(got, torch.Tensor):
            return back(want, got)
        if not isinstance(got, (tuple, list)):      # a plain answer (aten.equal's bool, a number): as it is
            return got
        return type(got)(back(w, g) for w, g in zip(want, got))


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
