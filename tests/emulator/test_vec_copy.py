"""Copy, UB to UB level-0 (asc-devkit 数据搬运/Copy（UBToUB掩码式高维数据搬运）.md): lane l of repeat r goes from
src block r * srcRepeatSize + l / 8 * srcStride to the same place under the dst strides; masked-off lanes keep
their value."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_vec_copy.cpp"


def run(emu, mode):
    x = np.arange(512, dtype=np.float32)
    out = np.zeros(512, np.float32)
    emu("vec_copy").vec_copy([x, out, np.array([mode], np.int32)])
    return x, out


def test_strided_repeats(emu):
    x, out = run(emu, 0)
    want = np.full(512, -1.0, np.float32)
    for r in range(3):
        want[r * 40:r * 40 + 40] = x[r * 64:r * 64 + 40]   # dst repeats 5 blocks (40 floats) apart
    np.testing.assert_array_equal(out, want)


def test_bit_mask_keeps_masked_lanes(emu):
    x, out = run(emu, 1)
    want = np.full(512, -1.0, np.float32)
    for r in range(2):
        want[r * 64:r * 64 + 64:2] = x[r * 64:r * 64 + 64:2]
    np.testing.assert_array_equal(out, want)


def test_poison_moves_with_the_copy(emu):
    with pytest.raises(EmulatorError) as e:
        run(emu, 2)
    line = next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith("// COPY:out"))
    assert (e.value.rule, e.value.line) == ("ub-uninitialized", line) and "element 64" in e.value.detail
