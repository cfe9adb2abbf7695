"""SimpleSoftMax (lib/activation/simplesoftmax.h), against PyTorch: exp(y - max) / sum with the row max / sum of
another tensor x (from SoftMax, as a kernel chains them).

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SimpleSoftMax.md; the A2 computation
impl/adv_api/detail/activation/softmax/membase/common/simple_softmax_common_impl.h (Sub, Exp, Div in float).
Precision: float within a few ulp; half: the inputs and the sum / max rounded to half, the result rounded once."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("simplesoftmax", headers_digest()), "simplesoftmax")


def min_tmp(k, half):
    return ((16 if half else 8) + k + 64) * 4  # GetSoftMaxMinTmpSize (tiling/tiling_api.h)


def run(mod, m, k, mode, tmp=-1, seed=0):
    rng = np.random.default_rng(seed + m * 3 + k)
    x = (rng.standard_normal((m, k)) * 2).astype(np.float32)
    y = (x + rng.uniform(-0.5, 0.5, (m, k))).astype(np.float32)
    if mode:
        x, y = x.astype(np.float16).astype(np.float32), y.astype(np.float16).astype(np.float32)
    case = np.concatenate([np.array([mode, min_tmp(k, mode > 0) if tmp < 0 else tmp, m, k], np.uint32),
                           np.zeros(16, np.uint32)]).view(np.uint8)
    out = np.zeros(m * k, np.float32)
    mod.ss_call([np.concatenate([x.ravel(), y.ravel()]), out, case.copy()], block_dim=1)
    return x, y, out.reshape(m, k)


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["float", "half", "half-float"])
@pytest.mark.parametrize("m,k", [(1, 64), (4, 32), (5, 48), (3, 208), (2, 1024)])
def test_simple_softmax_matches_torch(mod, m, k, mode):
    for tmp in (-1, 0):
        x, y, got = run(mod, m, k, mode, tmp)
        xt, yt = torch.from_numpy(x).double(), torch.from_numpy(y).double()
        mx = xt.max(-1, keepdim=True).values
        s = torch.exp(xt - mx).sum(-1, keepdim=True)
        if mode == 1:  # sum / max stored as half
            s = s.half().double()
        want = (torch.exp(yt - mx) / s).numpy()
        tol = 1e-5 if mode == 0 else 4e-3
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 0.1)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    need = min_tmp(64, True)
    with pytest.raises(EmulatorError) as e:
        run(mod, 4, 64, 1, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SimpleSoftMax")
    assert "GetSoftMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_simplesoftmax.cpp")
