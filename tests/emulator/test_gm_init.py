"""InitOutput (opkit_emu/gm_init.h) against CANN's implementation (impl/basic_api/kernel_operator_common_intf_impl.h,
mirror-cann/asc-devkit 82b89a15): every element set, any size (the tail goes out with DataCopyPad), adds under
SetAtomicAdd like every UB->GM copy, needs a TPipe, stays inside its GlobalTensor."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


@pytest.mark.parametrize("size", [1, 7, 8, 1000, 16 * 1024 + 3])
def test_fills_every_element(emu, size):
    y = np.full(size + 8, -1.0, np.float32)
    emu("gm_init").init_output([y, np.array([size, 0], np.int32)])
    np.testing.assert_array_equal(y[:size], np.full(size, 2.5, np.float32))
    np.testing.assert_array_equal(y[size:], np.full(8, -1.0, np.float32))  # nothing past `size`


def test_half_values(emu):
    y = np.zeros(64, np.float16)
    emu("gm_init").init_output([y.view(np.float32), np.array([64, 3], np.int32)])
    np.testing.assert_array_equal(y, np.full(64, 1.5, np.float16))


def test_adds_under_atomic_add(emu):
    y = np.full(2 * 40, 1.0, np.float32)
    emu("gm_init").init_output([y, np.array([40, 1], np.int32)], block_dim=2)
    np.testing.assert_array_equal(y, np.full(80, 3.5, np.float32))


def test_needs_a_tpipe(emu):
    with pytest.raises(EmulatorError) as e:
        emu("gm_init").init_output([np.zeros(8, np.float32), np.array([8, 2], np.int32)])
    assert e.value.rule == "queue-protocol" and "needs a TPipe" in str(e.value)


def test_stays_inside_the_buffer(emu):
    with pytest.raises(EmulatorError) as e:
        emu("gm_init").init_output([np.zeros(8, np.float32), np.array([9, 0], np.int32)])
    assert e.value.rule == "gm-bounds"
