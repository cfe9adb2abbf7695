"""The simulation engine's fast paths give the bits of the slow ones (issue 31).

- ROUNDS_ONCE: PyTorch's CPU kernel on the 16-bit tensors gives the correctly rounded result (the op computed
  exactly -- in float64 -- and rounded once), bitwise, on real cases (normal, wide, tiny/subnormal values,
  specials, broadcasting; a Python number operand is rounded to 16 bits by the 16-bit kernel, so the engine keeps
  those calls in FP32: the model test below has some). That is what an IEEE FP32 op rounded once gives too, but
  not every CPU's FP32 sqrt is IEEE: MKL's, on an AMD EPYC, is one float32 ulp off on 17 % of values, and at a
  16-bit tie that moves the rounded result (sqrt(255.875) in float16). So the reference here is float64, which
  holds on every CPU. NaN is compared as NaN (its sign and payload are not: CPUs differ there too).
- Elementwise tables: opkit's GELU/SiLU kernels (naive fp16-computing and FP32-computing) read from the table of
  their outputs on every bit pattern equal the kernel run on the tensor itself, bitwise, on real cases of several
  shapes (tile remainders, one element, a permuted non-contiguous tensor) in float16 and bfloat16.
- The whole engine: a model run with the fast paths equals the run with them switched off, bitwise.
"""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from opkit.accuracy import simulate
from opkit.accuracy.policy import load_policy
from opkit.accuracy.simulate import ROUNDS_ONCE, Simulator, by_table

LOW = (torch.float16, torch.bfloat16)


def _cases(dtype, shape=(4099,), seed=0):
    """Real cases as the harness draws them: normal, wide, tiny (subnormal results), mixed, specials."""
    g = torch.Generator().manual_seed(seed)
    n = torch.randn(shape, generator=g)
    out = [n, n * 300, n * 1e-4, n.exp() * 7 - 3, n * torch.randint(-8, 9, shape, generator=g).float().exp2()]
    special = n.clone().reshape(-1)
    values = torch.tensor([float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 65504.0, -65504.0, 6e-8])
    special[:8] = values[:special.numel()]
    out.append(special.reshape(shape))
    return [t.to(dtype) for t in out]


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise (NaN payloads aside: every NaN is a NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    nan = torch.isnan(a)
    return bool(torch.equal(nan, torch.isnan(b))) and bool(
        torch.equal(a[~nan].view(torch.int16), b[~nan].view(torch.int16)))


BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum}
UNARY = {"sqrt": lambda x: torch.sqrt(x.abs()), "relu": torch.relu, "neg": torch.neg, "abs": torch.abs,
         "max_pool1d": lambda x: F.max_pool1d(x.reshape(1, 1, -1), 3, 2),
         "max_pool2d": lambda x: F.max_pool2d(x[:4096].reshape(1, 4, 32, 32), 3, 2, 1),
         "max_pool3d": lambda x: F.max_pool3d(x[:4096].reshape(1, 1, 16, 16, 16), 2)}


def _rounded_once(exact: torch.Tensor, dtype) -> torch.Tensor:
    """float64 -> 16 bits through float32 (one IEEE conversion after another): for + - x / sqrt of 16-bit values
    float64's 53 and float32's 24 bits (>= 2p + 2) make that the correctly rounded 16-bit result."""
    return exact.float().to(dtype)


def test_the_reference_is_exact_where_a_cpus_fp32_sqrt_is_not():
    """sqrt(255.875) = 15.99609327...: correctly rounded to float16 it is 15.9921875 (just below the tie at
    15.99609375); an FP32 sqrt one ulp high lands on the tie and rounds to 16.0."""
    x = torch.tensor([255.875], dtype=torch.float16)
    assert _rounded_once(torch.sqrt(x.double()), torch.float16).item() == 15.9921875
    assert torch.sqrt(x).item() == 15.9921875


def test_every_rounds_once_op_is_checked_here():
    assert set(BINARY) | set(UNARY) == ROUNDS_ONCE


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("op", sorted(ROUNDS_ONCE))
def test_rounds_once_ops_equal_fp32_compute_rounded_once(op, dtype):
    cases = _cases(dtype)
    checked = 0
    for i, x in enumerate(cases):
        if op in BINARY:
            fn = BINARY[op]
            for y in (cases[(i + 1) % len(cases)], cases[(i + 3) % len(cases)][:1]):    # same shape, broadcast
                assert _same(fn(x, y), _rounded_once(fn(x.double(), y.double()), dtype)), (op, dtype, i, y.shape)
                checked += 1
        else:
            fn = UNARY[op]
            assert _same(fn(x), _rounded_once(fn(x.double()), dtype)), (op, dtype, i)
            checked += 1
    assert checked >= len(cases)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """opkit's GELU/SiLU kernels, both variants (built into the cache on first use; loaded outside any workspace)."""
    import opkit
    with contextlib.chdir(tmp_path_factory.mktemp("outside-workspace")):
        opkit.load(ops=["gelu_fp32", "silu_fp32"])
    return {v: getattr(torch.ops, ns) for v, ns in (("naive", "opkit_naive"), ("opkit", "opkit"))}


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("variant", ["naive", "opkit"])
def test_elementwise_tables_equal_the_kernel(kernels, variant, dtype):
    ns = kernels[variant]
    calls = {("gelu_fp32", "none"): lambda t: ns.gelu_fp32(t, "none"),
             ("gelu_fp32", "tanh"): lambda t: ns.gelu_fp32(t, "tanh"),
             ("silu_fp32", None): ns.silu_fp32}
    simulate._TABLES.clear()
    for (op, approx), kernel in calls.items():
        key = simulate.elementwise_key(variant, op, approx)
        for shape, seed in (((4099,), 1), ((3, 5, 777), 2), ((1,), 3), ((48, 257), 4)):
            for x in _cases(dtype, shape, seed):
                assert _same(by_table(key, kernel, x), kernel(x)), (variant, op, approx, dtype, shape)
        x = _cases(dtype, (6, 7, 9), 5)[0].permute(2, 0, 1)          # not contiguous
        assert _same(by_table(key, kernel, x), kernel(x.contiguous()))
    assert len(simulate._TABLES) == 3


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1, self.act, self.lin2 = nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)
        self.silu, self.pool = nn.SiLU(), nn.MaxPool1d(2)
        self.gamma = nn.Parameter(torch.full((16,), 0.7))

    def forward(self, x):
        y = self.lin2(self.act(self.lin1(x)))
        y = x + self.gamma * F.gelu(y, approximate="tanh") - torch.relu(y) / 3
        return self.pool(self.silu(y) * torch.sqrt(y.abs() + 1))


@pytest.mark.parametrize("policy", ["cann-force-fp16", "torch-npu-autocast", "cann-allow-mix-precision",
                                    "fp16-compute"])
def test_the_engine_with_fast_paths_equals_it_without(kernels, policy, monkeypatch):
    torch.manual_seed(0)
    m = _Block().eval()
    x = torch.randn(8, 3, 16) * 4
    fast, recs = Simulator(load_policy(policy)).run(m, (x,))
    assert any("opkit_naive" in r.kernel for r in recs) == (policy != "torch-npu-autocast")   # GELU/SiLU in fp16
    monkeypatch.setattr(simulate, "ROUNDS_ONCE", frozenset())
    monkeypatch.setattr(simulate, "ELEMENTWISE", frozenset())
    slow, _ = Simulator(load_policy(policy)).run(m, (x,))
    assert fast.dtype == slow.dtype and _same(fast.reshape(-1), slow.reshape(-1))
