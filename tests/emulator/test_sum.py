"""Sum, the advanced reduction (lib/reduce/sum.h), against PyTorch and the count-form ReduceSum.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归约操作/Sum接口/Sum.md (rows of [outter, inner] summed over
n; inner = n rounded up to 32 bytes; the additions are ReduceSum's binary tree); signature include/adv_api/reduce/
sum.h:54-80; sharedTmpBuffer size impl/adv_api/tiling/reduce/sum_tiling.cpp:19-42. Precision: the tree sum of T
(float: a few ulp of torch.sum; half: each pairwise add rounded to half)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("sum", headers_digest()), "sum")


def inner_of(n, half):
    blk = 16 if half else 8
    return -(-n // blk) * blk


def min_tmp(n, half):
    size, blk, rep = (2, 16, 128) if half else (4, 8, 64)
    return -(-(-(-n // rep)) // blk) * blk * size


def run(mod, outter, n, half, tmp, inner=None, x=None):
    inner = inner_of(n, half) if inner is None else inner
    if x is None:
        x = np.random.default_rng(n + outter).uniform(-2, 2, (outter, inner)).astype(np.float32)
    out = np.zeros(outter + 1, np.float32)
    mod.sum_call([x.ravel().copy(), out, np.array([outter, inner, n, tmp, half], np.uint32).view(np.uint8).copy()],
                 block_dim=1)
    return x, out


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("outter,n", [(1, 8), (3, 13), (4, 200), (2, 1000)])
def test_sum_matches_torch_and_reduce_sum(mod, outter, n, half):
    for tmp in (max(min_tmp(n, half), 32), 0):
        x, out = run(mod, outter, n, half, tmp)
        dt = torch.float16 if half else torch.float32
        want = torch.from_numpy(x[:, :n]).to(dt).float().sum(-1).numpy()
        np.testing.assert_allclose(out[:outter], want, rtol=1e-2 if half else 1e-5, atol=5e-2 if half else 1e-4)
        assert out[outter] == out[0]   # row 0 equals the count-form ReduceSum bit for bit (the page's tree)


def test_inner_must_be_n_rounded_to_32_bytes(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 13, 0, 32, inner=24)
    assert (e.value.rule, e.value.call) == ("api-argument", "Sum") and "inner 24" in e.value.detail


def test_tmp_below_cann_size_is_a_rule_violation(mod):
    need = min_tmp(1000, 0)
    assert need == 64    # 16 repeats of 64 floats -> 16 partial sums, two 32-byte blocks
    with pytest.raises(EmulatorError) as e:
        run(mod, 1, 1000, 0, need - 32)
    assert e.value.rule == "tensor-bounds" and "GetSumMaxMinTmpSize" in e.value.detail
    assert e.value.file.endswith("test_sum.cpp")
