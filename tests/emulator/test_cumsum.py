"""CumSum (lib/math/cumsum.h), against torch.cumsum.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/数学计算/CumSum接口/CumSum.md; signature
include/adv_api/math/cumsum.h:44-95, CumSumConfig / CumSumInfo cumsum_utils.h:27-39; minimum sharedTmpBuffer
impl/adv_api/tiling/math/cumsum_tiling.cpp:34-59; the additions impl/adv_api/detail/math/cumsum/cumsum_common_impl.h.
Precision: the running sum in float, added in order (float: bitwise a sequential float32 accumulate, within
rounding of torch.cumsum, which accumulates otherwise; half: each output the float running sum of the half inputs
rounded to half)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("cumsum", headers_digest()), "cumsum")


def min_tmp(outter, inner, half, last_axis):
    """GetCumSumMaxMinTmpSize's minimum, as cumsum_tiling.cpp computes it."""
    size = 2 if half else 4
    if not last_axis:
        return outter * inner * 4 if half else 0
    return (inner * 16 * 2 if half else 0) + 16 * inner * size * 2


def run(mod, outter, inner, half, last_axis, tmp, last_row=None, x=None):
    if x is None:
        x = np.random.default_rng(outter * 97 + inner).uniform(-2, 2, (outter, inner)).astype(np.float32)
    out = np.zeros(outter * inner + inner, np.float32)
    t = np.array([outter, inner, last_axis, half, tmp, inner if last_row is None else last_row], np.uint32)
    mod.cumsum_call([x.ravel().copy(), out, t.view(np.uint8).copy()], block_dim=1)
    return x, out[:outter * inner].reshape(outter, inner), out[outter * inner:]


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("last_axis", [1, 0], ids=["last_axis", "first_axis"])
@pytest.mark.parametrize("outter,inner", [(1, 16), (3, 32), (17, 16), (40, 64), (5, 256)])
def test_cumsum_matches_torch(mod, outter, inner, half, last_axis):
    for tmp in (max(min_tmp(outter, inner, half, last_axis), 32), 0):
        x, got, last = run(mod, outter, inner, half, last_axis, tmp)
        ax = 1 if last_axis else 0
        if half:   # the device's order: half inputs, float running sum, each output rounded to half
            xs = x.astype(np.float16).astype(np.float32)
            np.testing.assert_array_equal(got, np.add.accumulate(xs, axis=ax).astype(np.float16).astype(np.float32))
            want = torch.cumsum(torch.from_numpy(xs), dim=ax).half().float().numpy()
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
        else:      # float32 adds in order: bitwise numpy's sequential float32 accumulate; torch within rounding
            np.testing.assert_array_equal(got, np.add.accumulate(x, axis=ax, dtype=np.float32))
            want = torch.cumsum(torch.from_numpy(x), dim=ax).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(last, got[-1])   # outputLastRow: dst's last row


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    need = min_tmp(17, 16, 1, 1)
    assert need == 16 * 16 * 2 + 16 * 16 * 2 * 2   # the half cast buffer plus two transposes of 16 rows
    with pytest.raises(EmulatorError) as e:
        run(mod, 17, 16, 1, 1, need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "CumSum")
    assert "GetCumSumMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_cumsum.cpp")
    run(mod, 17, 16, 1, 1, need)   # exactly the minimum is enough
    need = min_tmp(4, 16, 1, 0)    # first axis, half: the whole tensor as float
    with pytest.raises(EmulatorError) as e:
        run(mod, 4, 16, 1, 0, need - 32)
    assert e.value.rule == "tensor-bounds" and str(need) in e.value.detail


def test_inner_must_be_32_byte_aligned(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 12, 0, 1, 4096)
    assert (e.value.rule, e.value.call) == ("api-argument", "CumSum") and "multiple of 32" in e.value.detail


def test_last_row_tensor_too_small_is_refused(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 16, 0, 1, 4096, last_row=8)
    assert e.value.rule == "api-argument" and "lastRowTensor" in e.value.detail
