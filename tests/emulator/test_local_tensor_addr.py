"""LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize) (asc-devkit 82b89a15 include/basic_api/kernel_tensor.h:189,
impl/basic_api/kernel_tensor_impl.h:1088-1093): tileSize elements at a UB byte address, as ops-nn
foreach/foreach_mul_list (foreach_mul_list_small_int.h:275) places its tiles. Checked: 32-byte alignment, inside UB."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("local_tensor_addr", headers_digest()), "local_tensor_addr")


def test_tensors_at_fixed_addresses(mod):
    x = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    y = np.zeros(64, np.float32)
    mod.at_addr([x, y, np.array([256], np.uint32)], block_dim=1)
    np.testing.assert_array_equal(y, x * np.float32(2))


@pytest.mark.parametrize("addr,rule", [(100, "ub-alignment"), (1 << 20, "ub-capacity")])
def test_bad_address_is_refused(mod, addr, rule):
    with pytest.raises(EmulatorError) as e:
        mod.at_addr([np.zeros(64, np.float32), np.zeros(64, np.float32), np.array([addr], np.uint32)], block_dim=1)
    assert e.value.rule == rule
