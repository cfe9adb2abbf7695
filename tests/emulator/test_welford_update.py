"""WelfordUpdate (lib/normalization/layernorm.h), against PyTorch's mean / var of the rows it has seen.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/WelfordUpdate.md; the A2 computation
impl/adv_api/detail/normalization/layernorm/layernorm_common_impl.h:357-533 (float; d = x - mean,
mean' = d x nRec + mean, M2' = d x (x - mean') + M2). Called once per row with nRec = 1 / i, the outputs are the
running mean and M2 (= n x var): float within a few ulp of torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("welford_update", headers_digest()), "welford_update")


def run(mod, steps, ab, half=0, tmp=512, reuse=0, inplace=0, ab_compute=0, fresh=False, seed=0):
    rng = np.random.default_rng(seed + steps * 13 + ab)
    x = (rng.standard_normal((steps, ab)) * 3 + 1).astype(np.float32)
    if half:
        x = x.astype(np.float16).astype(np.float32)
    m0 = rng.standard_normal(ab).astype(np.float32)
    v0 = rng.uniform(0, 1, ab).astype(np.float32)
    if fresh:  # a new accumulation: mean and M2 start at 0
        m0[:], v0[:] = 0, 0
    case = np.array([half, tmp, reuse, inplace, steps, ab, ab_compute or ab], np.uint32).view(np.uint8)
    out = np.zeros(3 * ab, np.float32)
    mod.wu_call([np.concatenate([x.ravel(), m0, v0]), out, case.copy()], block_dim=1)
    return x, m0, v0, out[:ab], out[ab:2 * ab], out[2 * ab:]


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("steps,ab", [(1, 64), (4, 32), (7, 200), (3, 1024)])
def test_running_mean_and_m2_match_torch(mod, steps, ab, half):
    if half and ab % 16:
        ab += 8
    for tmp in (768 if half else 512, 0):
        x, _, _, mean, m2, _ = run(mod, steps, ab, half, tmp, fresh=True)
        xt = torch.from_numpy(x).double()
        np.testing.assert_allclose(mean, xt.mean(0).numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(m2 / steps, xt.var(0, unbiased=False).numpy(), rtol=1e-4, atol=1e-5)


def test_one_step_is_the_a2_formula_bitwise(mod):
    x, m0, v0, mean, m2, _ = run(mod, 1, 64)
    d = x[0] - m0
    want_m = (d * np.float32(1.0) + m0).astype(np.float32)
    np.testing.assert_array_equal(mean, want_m)
    np.testing.assert_array_equal(m2, (d * (x[0] - want_m) + v0).astype(np.float32))


def test_inplace_copies_the_aligned_tail_and_leaves_the_rest(mod):
    """abComputeLength 20 of 64 with isInplace: the block-aligned tail (from 64 - align8(44) = 16) takes inMean /
    inVar first, then 0..19 are computed over it: 0..19 computed, 20..63 copied."""
    x, m0, v0, mean, m2, _ = run(mod, 1, 64, inplace=1, ab_compute=20)
    d = x[0, :20] - m0[:20]
    np.testing.assert_array_equal(mean[:20], (d + m0[:20]).astype(np.float32))
    np.testing.assert_array_equal(mean[20:], m0[20:])
    np.testing.assert_array_equal(m2[20:], v0[20:])


def test_without_inplace_the_outputs_beyond_compute_length_are_not_written(mod):
    _, _, _, mean, m2, _ = run(mod, 1, 64, ab_compute=20)
    assert (mean[20:] == -1).all() and (m2[20:] == -1).all()  # the kernel's fill


def test_reuse_source_leaves_x_minus_mean_in_x(mod):
    x, m0, _, _, _, x_after = run(mod, 1, 64, reuse=1, tmp=256)
    np.testing.assert_array_equal(x_after, (x[0] - m0).astype(np.float32))


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 1, 64, half=1, tmp=512)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "WelfordUpdate")
    assert "GetWelfordUpdateMaxMinTmpSize" in e.value.detail and "768" in e.value.detail


def test_unaligned_ab_length_is_refused(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 1, 64, ab_compute=65)
    assert (e.value.rule, e.value.call) == ("api-argument", "WelfordUpdate") and "abComputeLength 65" in e.value.detail
