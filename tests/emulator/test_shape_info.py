"""ShapeInfo on tensors (opkit_emu/shape_info.h) against 数据结构/ShapeInfo.md and the Set/GetShapeInfo pages
(asc-devkit docs/zh/api/SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15) (int4b_t tensors: test_int4b.py)."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


def test_set_and_get_shape_info(emu):
    out = np.zeros(48, np.uint32)
    emu("shape_info").shapes([np.array([0], np.int32), out])
    want = ([3, 2, 4, 8, 2, 8, 7, 1, 64] +     # LocalTensor (read from a copy): NZ, size 2*4*8
            [2, 8, 7, 2, 8, 7, 0, 56] +        # GlobalTensor: ND, original shape = shape
            [0, 0, 0, 1])                      # a tensor nobody gave a shape: 0 dims, ND, GetShapeSize 1
    assert list(out[:len(want)]) == want


def test_more_than_eight_dimensions_asserts(emu):
    # ShapeInfo's constructor: ASCENDC_ASSERT(inputShapeDim <= K_MAX_SHAPE_DIM) (include/basic_api/kernel_tensor.h)
    with pytest.raises(EmulatorError) as e:
        emu("shape_info").shapes([np.array([1], np.int32), np.zeros(48, np.uint32)])
    assert e.value.rule == "kernel-assert" and "9 dimensions" in str(e.value)
