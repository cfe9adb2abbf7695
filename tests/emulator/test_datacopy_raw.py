"""CANN's pointer-level copies (DataCopyGM2UBImpl, DataCopyUB2GMImpl, DataCopyPadGm2UBImpl, DataCopyPadUB2GMImpl;
asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h:53-610) and PopStackBuffer
(impl/basic_api/kernel_pop_stack_buffer.h:27-70): the same data and rules as the tensor forms."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("datacopy_raw", headers_digest()), "datacopy_raw")


def test_pointer_forms_copy_like_the_tensor_forms(mod):
    x = np.random.default_rng(0).standard_normal(128).astype(np.float32)
    out = np.zeros(80, np.float32)
    mod.raw_copy([x, out, np.array([0], np.uint32)], block_dim=1)
    np.testing.assert_array_equal(out[:64], x[:64])
    np.testing.assert_array_equal(out[64:77], x[64:77])        # 13 floats: the Pad forms' ragged length
    # the rest of UB below the 64 bytes A2 keeps for KFC messages (TOTAL_UB_SIZE 192 KiB)
    assert out[77] == 192 * 1024 - 64 - out[78]


def test_a_pointer_into_no_buffer_is_refused(mod):
    x = np.zeros(128, np.float32)
    with pytest.raises(EmulatorError) as e:
        mod.raw_copy([x, np.zeros(80, np.float32), np.array([1], np.uint32)], block_dim=1)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "DataCopyPadGm2UBImpl")
    assert "no buffer" in e.value.detail
