"""SoftMax, the advanced API (asc-devkit docs/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftMax.md): per row of
[srcM, srcK], max and sum over the first oriSrcK columns (CANN's implementation reduces over originalSrcShape.k),
dst = exp(x - max) / sum, sum and max broadcast over one 32-byte block per row; srcK must be 32-byte aligned
(CANN's CPU-debug check softmax_check_common.h asserts it)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_adv_softmax.cpp"


def marker(tag: str) -> int:
    return next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith(f"// SOFTMAX:{tag}"))


def run(emu, scenario, m, k, ori_k, x=None):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(m * k).astype(np.float32) * 3 if x is None else x
    out = np.zeros(m * k + 16 * m, np.float32)
    tiling = np.array([scenario, m, k, ori_k], np.uint32).view(np.uint8)
    emu("adv_softmax").softmax_rows([x, out, tiling], block_dim=1)
    return x.reshape(m, k), out[:m * k].reshape(m, k), out[m * k:m * k + 8 * m].reshape(m, 8), out[m * k + 8 * m:].reshape(m, 8)


def reference(x, ori_k):
    v = x[:, :ori_k].astype(np.float64)
    mx = v.max(axis=1, keepdims=True)
    e = np.exp(v - mx)
    return e / e.sum(axis=1, keepdims=True), mx, e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("m,k,ori_k", [(4, 64, 64), (5, 80, 77), (3, 8, 1)])
def test_rows_reduce_over_the_valid_columns(emu, m, k, ori_k):
    x, y, s, mx = run(emu, 0, m, k, ori_k)
    want, wmax, wsum = reference(x, ori_k)
    np.testing.assert_allclose(y[:, :ori_k], want, rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(mx, np.repeat(wmax.astype(np.float32), 8, axis=1))  # broadcast per row
    np.testing.assert_allclose(s, np.repeat(wsum, 8, axis=1), rtol=1e-6)
    # padded columns are computed, not reduced: exp(x - max) / sum of the valid ones
    np.testing.assert_allclose(y[:, ori_k:], np.exp(x[:, ori_k:] - wmax) / wsum, rtol=2e-6, atol=1e-7)


def test_half_source_with_float_sum_and_max(emu):
    x, y, s, mx = run(emu, 1, 4, 64, 64)
    xh = x.astype(np.float16).astype(np.float32)
    want, wmax, wsum = reference(xh, 64)
    np.testing.assert_allclose(y, want, rtol=2e-3, atol=1e-4)      # half result
    np.testing.assert_allclose(s[:, :1], wsum, rtol=1e-5)          # float sum of the half inputs


def test_half_sum_rounds_a_tie_away_from_zero(emu):
    # 2049 equal columns: the float sum 2049 lies halfway between the halves 2048 and 2050. CANN's A2 code casts
    # float -> half with FLOAT2HALF_ROUND_MODE = CAST_ROUND (asc-devkit 82b89a15 impl/adv_api/detail/activation/
    # softmax/membase/v220/softmax_common_impl.h:31; softmax_generic_nd_impl.h:81), ties away: 2050, not even 2048.
    # dst = 1 / 2049 is no tie: either mode gives the same half.
    _, y, s, m = run(emu, 5, 1, 2064, 2049, x=np.zeros(2064, np.float32))
    assert (s == 2050).all() and (m == 0).all()
    np.testing.assert_array_equal(y[:, :2049], np.float16(1 / 2049).astype(np.float32))


def test_form_without_sum_and_max(emu):
    x, y, _, _ = run(emu, 2, 2, 16, 16)
    np.testing.assert_allclose(y, reference(x, 16)[0], rtol=2e-6, atol=1e-7)


def test_unaligned_last_axis_is_rejected(emu):
    with pytest.raises(EmulatorError) as e:
        run(emu, 3, 2, 12, 12, x=np.zeros(24, np.float32))
    assert (e.value.rule, e.value.call, e.value.line) == ("api-argument", "SoftMax", marker("call"))
    assert "srcK 12 x 4 bytes is not 32-byte aligned" in e.value.detail


def test_a_row_with_unwritten_input_is_poison_in_all_outputs(emu):
    # the last row was never loaded: its results stay in UB, but its sum block (row 2: element 16) reaches GM
    with pytest.raises(EmulatorError) as e:
        run(emu, 4, 3, 8, 8)
    assert (e.value.rule, e.value.line) == ("ub-uninitialized", marker("stats")), str(e.value)
    assert re.search(r"element 16\b", e.value.detail), e.value.detail


def test_a_nan_anywhere_in_a_row_gives_a_nan_max(emu):
    """The row max is Max / BlockReduceMax's, and a NaN operand gives NaN wherever it sits (the emulator's one NaN
    rule for max, docs/emulator.md; unverified on A2): a NaN at column 3 must not be skipped as std::max skips it."""
    x = np.random.default_rng(5).standard_normal(2 * 64).astype(np.float32)
    x[3] = np.nan
    _, y, s, mx = run(emu, 0, 2, 64, 64, x=x)
    assert np.isnan(mx[0]).all() and np.isnan(y[0]).all()
    assert np.isfinite(mx[1]).all() and np.isfinite(y[1]).all()
