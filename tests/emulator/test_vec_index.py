"""CreateVecIndex, count form (asc-devkit .../CreateVecIndex.md): dst = np.arange(first, first + count, dtype),
elements past count untouched."""
from __future__ import annotations

import numpy as np


def test_index_ramps_per_type(emu):
    out = np.zeros(3 * 320, np.float32)
    emu("vec_index").vec_index([out])
    np.testing.assert_array_equal(out[:300], np.arange(300, dtype=np.float32) + 2.5)
    assert (out[300:320] == 0).all()
    np.testing.assert_array_equal(out[320:640].view(np.int32)[:300], np.arange(-7, 293, dtype=np.int32))
    # half: 2040 + i rounded to half precision (spacing 2 above 2048)
    np.testing.assert_array_equal(out[640:], (2040 + np.arange(320, dtype=np.float64)).astype(np.float16).astype(np.float32))
