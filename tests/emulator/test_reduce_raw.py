"""CANN's pointer-level group reductions (BlockReduceSum/Max/MinIntrinsicsImpl, PairReduceSumIntrinsicsImpl;
asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h:27-57, reached through
kernel_operator.h): the tensor forms' results and checks on the UB the pointers name, under the register's mask."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("reduce_raw", headers_digest()), "reduce_raw")


def test_counter_mode_block_max_twice_gives_each_rows_max(mod):
    """moe_gating_top_k_softmax ReduceMaxFP32Perf's two passes; then Sum / Min per 8-float block and the pair sums,
    normal mode."""
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    out = np.zeros(196, np.float32)
    mod.raw_reduce([x, out, np.array([0], np.uint32)], block_dim=1)
    np.testing.assert_array_equal(out[:4], x.reshape(4, 64).max(axis=1))
    np.testing.assert_allclose(out[4:36], x.reshape(32, 8).sum(axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[36:68], x.reshape(32, 8).min(axis=1))
    np.testing.assert_array_equal(out[68:196], x.reshape(128, 2).sum(axis=1))  # one float addition each


def test_a_pointer_into_no_buffer_is_refused_by_name(mod):
    with pytest.raises(EmulatorError) as e:
        mod.raw_reduce([np.zeros(256, np.float32), np.zeros(196, np.float32), np.array([1], np.uint32)], block_dim=1)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "BlockReduceMaxIntrinsicsImpl")


def test_a_src_pointer_into_a_buffers_middle_reads_from_there(mod):
    """ta + 64 floats, 3 repeats of 64: the max of each 8-float block of x[64:256]."""
    x = np.random.default_rng(1).standard_normal(256).astype(np.float32)
    out = np.zeros(196, np.float32)
    mod.raw_reduce([x, out, np.array([3], np.uint32)], block_dim=1)
    np.testing.assert_array_equal(out[:24], x[64:].reshape(24, 8).max(axis=1))
    assert not out[24:].any()


def test_a_read_past_the_pointers_buffer_is_tensor_bounds(mod):
    """ta + 200 floats, 4 repeats: 1024 bytes read where the buffer holds 56 floats (224 bytes) from there."""
    with pytest.raises(EmulatorError) as e:
        mod.raw_reduce([np.zeros(256, np.float32), np.zeros(196, np.float32), np.array([2], np.uint32)], block_dim=1)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "BlockReduceMaxIntrinsicsImpl")
    assert "224 bytes" in str(e.value)
