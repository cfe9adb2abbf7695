"""Select with a byte mask (lib/select/selectwithbytesmask.h), against torch.where.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/数据过滤/Select-95.md (mask value 0 takes src0, else src1;
the mask's extra last-axis columns ignored); signature include/adv_api/select/selectwithbytesmask.h:31-55; the
sharedTmpBuffer minimum impl/adv_api/detail/select/selectwithbytesmask/selectwithbytesmask_impl.h:49-70 (1024
bytes, plus the mask copy when isReuseMask is false and the last axes differ). Exact (a choice)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("selectwithbytesmask", headers_digest()), "selectwithbytesmask")


def run(mod, rows, src_cols, mask_cols, reverse=0, tmp=1024, reuse=1, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, src_cols)).astype(np.float32)
    m = (rng.random((rows, mask_cols)) < 0.5).astype(np.uint8) * rng.integers(1, 255, (rows, mask_cols), dtype=np.uint8)
    y = np.zeros(rows * src_cols, np.float32)
    t = np.array([rows, src_cols, mask_cols, reverse, tmp, reuse], np.uint32)
    mod.select_bytes([x.ravel().copy(), m.ravel().copy(), y, t.view(np.uint8).copy()], block_dim=1)
    return x, m, y.reshape(rows, src_cols)


@pytest.mark.parametrize("rows,src_cols,mask_cols", [(4, 16, 32), (3, 64, 64), (2, 8, 64)])
@pytest.mark.parametrize("reverse", [0, 1])
def test_matches_torch_where(mod, rows, src_cols, mask_cols, reverse):
    x, m, y = run(mod, rows, src_cols, mask_cols, reverse)
    zero = torch.from_numpy(m[:, :src_cols] == 0)
    xs, s = torch.from_numpy(x), torch.tensor(5.5)
    want = torch.where(zero, s, xs) if reverse else torch.where(zero, xs, s)
    np.testing.assert_array_equal(y, want.numpy())


def test_tmp_below_minimum_is_tensor_bounds(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 16, 32, tmp=992)
    assert e.value.rule == "tensor-bounds" and "1024" in e.value.detail


def test_no_mask_reuse_needs_the_mask_copy(mod):
    """isReuseMask false with unequal last axes: 1024 + AlignUp(32 x 1, 32) bytes."""
    run(mod, 2, 16, 32, tmp=1056, reuse=0)
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 16, 32, tmp=1024, reuse=0)
    assert e.value.rule == "tensor-bounds" and "1056" in e.value.detail


def test_mask_last_axis_not_32_byte_aligned_is_refused(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 8, 48)
    assert e.value.rule == "api-argument" and "maskLastAxis 48" in e.value.detail
