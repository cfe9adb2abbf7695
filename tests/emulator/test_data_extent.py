"""The data extent of a GM argument (launch ABI v3 arg_data_bytes; opkit_emu/datacopy.h sink_rows; docs/emulator.md
"Data extent"): poison (UB nothing wrote) copied to GM is an error only inside the tensor's data. ops-nn ReluV3 float16
on (3, 72) copies its last tile of 216 halves out as 224 (op_kernel/relu_v3.h:148-149,155 at e5c3fa93): 8 unwritten
lanes land in bytes [432, 448) of a 432-byte output, inside the allocation the device gives it (ALIGN_UP(432, 32) +
32 = 480: hicann/ops-test-kit rts_interface.py get_npu_aligned_size, docs/cann.md) and never read -- right on the
device, so it must pass here; the same block reaching into the data still fails, and the allocation's end is still
gm-bounds."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE
from opkit.emulator.abi import KernelModule
from opkit.emulator.modules import compile_module
from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def mod():
    return KernelModule(compile_module(HERE / "test_data_extent.cpp", "emu_data_extent", 2, CACHE / "modules",
                                       opt="-O1"))


def run(mod, mode, n, alloc, data):
    y = np.zeros(alloc, np.uint8)
    mod.launch([y, np.array([mode, n], np.uint32)], 1, data_bytes=[data, None])
    return y


@pytest.mark.parametrize("mode", [0, 1])   # plain DataCopy, and the atomic copy
def test_a_partly_written_last_block_may_land_in_padding(mod, mode):
    y = run(mod, mode, 216, 480, 432)          # ReluV3's figures: 216 halves of data, 224 copied
    np.testing.assert_array_equal(y[:432].view(np.float16), np.ones(216, np.float16))


@pytest.mark.parametrize("mode", [0, 1])
def test_the_same_block_inside_the_data_still_fails(mod, mode):
    for data in (434, None):                   # one lane of the garbage inside the data; no extent: all is data
        with pytest.raises(EmulatorError) as e:
            run(mod, mode, 216, 480, data)
        assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy", str(e.value)


def test_padding_ends_at_the_allocation(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 0, 216, 440, 432)             # the block runs past the buffer: out of bounds as before
    assert e.value.rule == "gm-bounds"


def test_strided_rows_check_only_the_bytes_in_the_data(mod):
    # 2 rows of 64 bytes; 50 halves (100 bytes) written: row 1 straddles a 100-byte extent
    y = run(mod, 2, 50, 160, 100)
    np.testing.assert_array_equal(y[:100].view(np.float16), np.ones(50, np.float16))
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 50, 160, 102)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopyPad", str(e.value)


def test_an_extent_past_the_buffer_is_refused(mod):
    with pytest.raises(ValueError, match="data_bytes 481"):
        run(mod, 0, 216, 480, 481)
