"""Level-0 addressing as the official pages define it (SIMD计算说明/高维切分.md, 掩码/接口内设置Mask.md,
掩码操作/SetVectorMask.md; mirror-cann/asc-devkit 7359511d), shared by the level-0 conformance tests:

  - lane l of repeat r of an operand is element (r*repStride + (l // perBlock)*blkStride)*perBlock
    + l % perBlock (strides in 32-byte DataBlocks);
  - Normal mode: continuous mask = first `mask` lanes, bit mask = mask[0] lanes 0..63, mask[1] 64..127;
  - Counter mode: mask = total element count, repeatTime ignored, repeats inferred.
`how`: 0 continuous argument, 1 bit-array argument, 2 mask register (Normal), 3/4 Counter mode.
"""
from __future__ import annotations

import numpy as np


def lanes_of(dt):
    return 256 // np.dtype(dt).itemsize


def plan(dt, how, lo, hi, repeat):
    """[(repeat index, active lanes)]."""
    L = lanes_of(dt)
    if how in (3, 4):
        reps = -(-lo // L)
        return [(r, list(range(L if r < reps - 1 else lo - (reps - 1) * L))) for r in range(reps)]
    if how == 0:
        act = list(range(lo))
    else:
        act = [l for l in range(L) if (lo >> l if l < 64 else hi >> (l - 64)) & 1]
    return [(r, act) for r in range(repeat)]


def at(dt, r, l, blk, rep):
    pb = 32 // np.dtype(dt).itemsize
    return (r * rep + (l // pb) * blk) * pb + l % pb


def lane_index(dt, pl, blk, rep):
    """Element index of every active lane of the plan, in (repeat, lane) order."""
    return np.array([at(dt, r, l, blk, rep) for r, act in pl for l in act], np.int64)


def flat_lanes(dt, pl):
    """r * lanes + l of every active lane (bit positions of level-0 compares, Select masks, offsets)."""
    return np.array([r * lanes_of(dt) + l for r, act in pl for l in act], np.int64)
