"""A switch that makes the CPU's 16-bit kernels round differently (and the CPU-independent arithmetic, from the
package: opkit/quant/amct/portable.py).

:class:`PerturbLowPrecision` is the test-only switch ``OPKIT_TEST_PERTURB16=SEED`` (conftest.py): the outputs of
every float16/bfloat16 matmul and convolution move by one ulp at random, i.e. a CPU whose 16-bit kernels round
differently; a test that still passes under it does not depend on this CPU's kernels.
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from opkit.quant.amct.portable import MATMULS, Float64Arithmetic, cpu_description  # noqa: F401 - the tests' one import

LOW = (torch.float16, torch.bfloat16)
_BITS = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32}


class PerturbLowPrecision(TorchDispatchMode):
    """Each matmul/conv output element of ``dtypes`` (default float16/bfloat16) moves one ulp up or down with
    probability 1/2 (seeded)."""

    def __init__(self, seed: int = 0, dtypes=LOW):
        super().__init__()
        self.gen = torch.Generator().manual_seed(seed)
        self.dtypes, self.calls = tuple(dtypes), 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in MATMULS and isinstance(out, torch.Tensor) and out.dtype in self.dtypes and out.numel():
            self.calls += 1
            out = one_ulp(out, self.gen)
        return out


def one_ulp(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """t with each finite non-zero element moved to a neighbouring value at random (half of them left alone)."""
    step = torch.randint(-1, 2, t.shape, generator=gen, dtype=torch.int64)
    step = torch.where(torch.rand(t.shape, generator=gen) < 0.5, step, torch.zeros_like(step))
    bits = t.contiguous().view(_BITS[t.dtype])
    # for negative values the bit pattern runs backwards; either way it is the neighbouring representable value
    moved = (bits.to(torch.int64) + step).to(bits.dtype).view(t.dtype)
    keep = ~torch.isfinite(t) | (t == 0) | ~torch.isfinite(moved)
    return torch.where(keep, t, moved).reshape(t.shape)
