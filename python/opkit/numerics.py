"""Sums, cosines and RMS errors whose result does not depend on the machine.

``torch.dot`` goes through the BLAS and ``torch.sum`` through ATen's vectorised reduction: how either adds
up depends on the library build and on the CPU's vector width, so two machines can give different last
bits for the same tensors (for two bit-identical tensors, a cosine of 0.9999999999999999). Every error
metric opkit reports is computed here instead:

- bit-identical inputs give exactly 1.0 (cosine) and 0.0 (errors), checked before any arithmetic;
- otherwise the sums are NumPy's pairwise summation over contiguous float64, whose order of additions is
  fixed by NumPy's source and not by the BLAS or the CPU. Its rounding error is at most about
  ``log2(n) * 2**-53`` relative to the sum of absolute values; a cosine is therefore reproducible to the
  last bit on every machine with the same NumPy, and within ``1e-12`` of the exact value for any n opkit
  meets (the tolerance docs/harness.md states for cosine comparisons across NumPy versions).
"""
from __future__ import annotations

import math

import numpy as np
import torch


def _f64(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().to(torch.float64).reshape(-1).contiguous().numpy()
    return np.ascontiguousarray(x, dtype=np.float64).reshape(-1)


def fsum(x) -> float:
    """Pairwise float64 sum (NumPy's, machine-independent order)."""
    return float(np.add.reduce(_f64(x)))


def _scaled(a: np.ndarray) -> tuple[np.ndarray, float]:
    """``a / max|a|`` (so squares neither overflow nor underflow) and that scale."""
    s = float(np.max(np.abs(a))) if a.size else 0.0
    return (a / s if s > 0 else a), s


def cosine(a, b) -> float | None:
    """Cosine similarity of two equal-length vectors of finite values (float64): exactly 1.0 when they are
    equal element for element, 1.0 when both are all zero, 0.0 when only one is; None when empty."""
    x, y = _f64(a), _f64(b)
    if x.size == 0:
        return None
    if np.array_equal(x, y):
        return 1.0
    xs, sx = _scaled(x)
    ys, sy = _scaled(y)
    if sx == 0 and sy == 0:
        return 1.0
    if sx == 0 or sy == 0:
        return 0.0
    dot = float(np.add.reduce(xs * ys))
    nx, ny = float(np.add.reduce(xs * xs)), float(np.add.reduce(ys * ys))
    c = dot / math.sqrt(nx * ny)
    return max(-1.0, min(1.0, c))


def rms(x) -> float:
    """Root mean square of a vector (0.0 when empty or all zero), machine-independent."""
    v = _f64(x)
    if v.size == 0:
        return 0.0
    vs, s = _scaled(v)
    return 0.0 if s == 0 else s * math.sqrt(float(np.add.reduce(vs * vs)) / v.size)


def mean(x) -> float:
    """Arithmetic mean, machine-independent (NaN for an empty vector)."""
    v = _f64(x)
    return float(np.add.reduce(v)) / v.size if v.size else math.nan
