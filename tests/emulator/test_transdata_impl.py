"""TransDataTo5HDImpl (opkit_emu/transpose.h), CANN's implementation function that ops-nn kernels call directly
(activation/ge_glu_grad_v2, index/scatter_list): asc-devkit 82b89a15 impl/basic_api/dav_c220/
kernel_operator_vec_transpose_impl.h:246-273, the vnchwconv instruction of TransDataTo5HD.md over __ubuf__ pointer
lists or uint64_t address lists. For 16-bit data one repeat is a 16 x 16 transpose of the 16 DataBlocks; exact."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("transdata_impl", headers_digest()), "transdata_impl")


@pytest.mark.parametrize("form", [0, 1])
def test_pointer_and_address_lists_transpose(mod, form):
    x = np.random.default_rng(form).integers(-30000, 30000, (16, 16)).astype(np.int16)
    y = np.zeros(256, np.int16)
    mod.transdata_impl([x.ravel().copy(), y, np.array([form], np.uint32)], block_dim=1)
    np.testing.assert_array_equal(y.reshape(16, 16), x.T)


def test_pointer_outside_ub_is_tensor_bounds(mod):
    x = np.zeros(256, np.int16)
    with pytest.raises(EmulatorError) as e:
        mod.transdata_impl([x, np.zeros(256, np.int16), np.array([2], np.uint32)], block_dim=1)
    assert e.value.rule == "tensor-bounds" and "srcList[0]" in e.value.detail
