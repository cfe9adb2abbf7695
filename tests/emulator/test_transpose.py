"""TransDataTo5HD and Transpose (opkit_emu/transpose.h) against numpy references: the pages' own examples
(数据排布转换/TransDataTo5HD.md, Transpose.md and their golden script examples/.../transpose/scripts/gen_data.py,
mirror-cann/asc-devkit 82b89a15), and the address lists CANN's own A2 Transpose builds for 32- and 8-bit data."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError

RNG = np.random.default_rng(5)


def test_nchw_to_nc1hwc0_half(emu):
    x = RNG.standard_normal((2, 32, 16, 16)).astype(np.float16)
    y = np.zeros(x.size, np.float16)
    emu("transpose").nc1hwc0_half([x, y])
    golden = x.reshape(2, 2, 16, 16, 16).transpose(0, 1, 3, 4, 2)  # gen_data.py scenario 3
    np.testing.assert_array_equal(y, golden.ravel())


def test_b32_blocks_pair_into_rows(emu):
    x = RNG.standard_normal(128).astype(np.float32)
    y = np.zeros(128, np.float32)
    emu("transpose").frac_f32([x, y, np.zeros(1, np.int32)])
    np.testing.assert_array_equal(y, x.reshape(16, 8).T.ravel())


def test_list_entries_must_be_aligned(emu):
    with pytest.raises(EmulatorError) as e:
        emu("transpose").frac_f32([np.zeros(128, np.float32), np.zeros(128, np.float32), np.ones(1, np.int32)])
    assert e.value.rule == "ub-alignment" and "srcList[3]" in str(e.value)


def test_b8_half_blocks(emu):
    x = RNG.integers(0, 256, 1024, dtype=np.uint8)
    y = np.zeros(1024, np.uint8)
    emu("transpose").frac_b8([x, y])
    np.testing.assert_array_equal(y, x.reshape(32, 32).T.ravel())


def test_one_repeat_starts_at_the_stride(emu):
    x = RNG.standard_normal(512).astype(np.float16)
    y = np.zeros(512, np.float16)
    emu("transpose").repeat_one([x, y, np.zeros(1, np.int32)])
    np.testing.assert_array_equal(y[:256], np.zeros(256, np.float16))
    np.testing.assert_array_equal(y[256:], x[256:].reshape(16, 16).T.ravel())


def test_poison_follows_each_element(emu):
    # block 20 of src (row 4 of the second 16 x 16 block) was never written: column 4 of the result is poison
    with pytest.raises(EmulatorError) as e:
        emu("transpose").repeat_one([np.zeros(512, np.float16), np.zeros(512, np.float16), np.ones(1, np.int32)])
    assert e.value.rule == "ub-uninitialized" and "element 260 " in str(e.value)  # 256 + row 0, column 4


@pytest.mark.parametrize("mode", [0, 1])
def test_transpose_16x16(emu, mode):
    x = RNG.standard_normal(256).astype(np.float16)
    y = np.zeros(256, np.float16)
    emu("transpose").transpose([x, y, np.array([mode], np.int32)])
    np.testing.assert_array_equal(y, x.reshape(16, 16).T.ravel())


@pytest.mark.parametrize("mode,axes", [(2, (0, 2, 3, 1)), (3, (0, 3, 1, 2))])
def test_transpose_nchw_nhwc(emu, mode, axes):
    x = RNG.standard_normal(144).astype(np.float16)
    y = np.zeros(144, np.float16)
    emu("transpose").transpose([x, y, np.array([mode], np.int32)])
    shape = (3, 3, 2, 8) if mode == 2 else (3, 2, 8, 3)   # N C H W, or N H W C
    np.testing.assert_array_equal(y, np.transpose(x.reshape(shape), axes).ravel())


def test_transpose_tmp_too_small(emu):
    with pytest.raises(EmulatorError) as e:
        emu("transpose").transpose([np.zeros(144, np.float16), np.zeros(144, np.float16), np.array([4], np.int32)])
    assert e.value.rule == "tensor-bounds" and "needs 2560" in str(e.value)


def test_transpose_nchw_in_place_refused(emu):
    with pytest.raises(EmulatorError) as e:
        emu("transpose").transpose([np.zeros(144, np.float16), np.zeros(144, np.float16), np.array([5], np.int32)])
    assert e.value.rule == "api-argument" and "overlap" in str(e.value)
