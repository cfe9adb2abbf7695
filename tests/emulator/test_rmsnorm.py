"""RmsNorm (lib/normalization/rmsnorm.h), against PyTorch's rms_norm.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/RmsNorm.md; signature
include/adv_api/normalization/rmsnorm.h; the tiling as impl/adv_api/tiling/normalization/rmsnorm_tiling_impl.cpp
GetRmsNormTilingInfo fills it (reproduced in `tiling` below) and its minimum buffer (GetRmsNormMinTmpSize); the A2
computation impl/adv_api/detail/normalization/rmsnorm/rmsnorm_common_impl.h (float throughout, the mean over
originalHLength times the tiling's reciprocal). Precision: float within a few ulp of torch (the row sum's order
differs); half: the float result rounded once to half, so within one half ulp of torch's float computation."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("rmsnorm", headers_digest()), "rmsnorm")


def min_tmp(h, half):
    return (h * (2 if half else 1) + 8) * 4


def tiling(b, s, h, ori_h, stack_bytes, half):
    """GetRmsNormTilingInfo (not basic block): the 12 RmsNormTiling fields"""
    total, coeff = stack_bytes // 4, 2 if half else 1
    bs = 1
    while total >= (bs + 1) * h * coeff + -(-(bs + 1) // 8) * 8:
        bs += 1
    one = min(bs * h, b * s * h)
    bs = min(one // h, 255)
    one = bs * h
    inp = b * s * h
    return [b, s, h, ori_h, np.float32(1.0 / ori_h).view(np.uint32), one, bs, -(-bs // 8) * 8, inp // one,
            inp - inp % one, inp % one, (inp % one) // h]


def run(mod, b, s, h, ori_h, half, tmp, eps=1e-6, fields=None, seed=0):
    rng = np.random.default_rng(seed + b * 7 + s * 5 + h + ori_h)
    x = rng.standard_normal((b, s, h)).astype(np.float32)
    x[..., ori_h:] = 0.0   # the padding the page asks for
    g = rng.uniform(0.5, 1.5, h).astype(np.float32)
    stack = tmp if tmp else min_tmp(h, half) * 4
    f = tiling(b, s, h, ori_h, stack, half) if fields is None else fields
    case = np.concatenate([np.array([half, tmp], np.uint32), np.array([eps], np.float32).view(np.uint32),
                           np.array(f, np.uint32)]).view(np.uint8)
    out = np.zeros(b * s * h, np.float32)
    mod.rms_call([np.concatenate([x.ravel(), g]), out, case.copy()], block_dim=1)
    return x, g, out.reshape(b, s, h)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,s,h,ori_h", [(1, 1, 64, 64), (2, 3, 32, 32), (2, 4, 48, 40), (1, 20, 128, 100)])
def test_rmsnorm_matches_torch(mod, b, s, h, ori_h, half):
    for tmp in (min_tmp(h, half), min_tmp(h, half) * 3, 0):
        x, g, got = run(mod, b, s, h, ori_h, half, tmp)
        xs = torch.from_numpy(x[..., :ori_h])
        gs = torch.from_numpy(g[:ori_h])
        if half:
            xs, gs = xs.half().float(), gs.half().float()
        want = torch.nn.functional.rms_norm(xs, (ori_h,), gs, eps=1e-6)
        if half:
            np.testing.assert_allclose(got[..., :ori_h], want.numpy(), rtol=2e-3, atol=2e-3)
            assert np.array_equal(got[..., :ori_h], got[..., :ori_h].astype(np.float16).astype(np.float32))
        else:
            np.testing.assert_allclose(got[..., :ori_h], want.numpy(), rtol=2e-6, atol=2e-6)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    need = min_tmp(64, 1)
    assert need == (64 * 2 + 8) * 4
    with pytest.raises(EmulatorError) as e:
        run(mod, 1, 2, 64, 64, 1, need - 32, fields=tiling(1, 2, 64, 64, need, 1))
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "RmsNorm")
    assert "GetRmsNormMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_rmsnorm.cpp")


def test_unfilled_tiling_is_refused(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 1, 2, 32, 32, 0, 0, fields=[1, 2, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0])
    assert (e.value.rule, e.value.call) == ("api-argument", "RmsNorm") and "GetRmsNormTilingInfo" in e.value.detail
