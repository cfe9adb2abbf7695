"""Broadcast / BroadCast (lib/pad/broadcast.h), against PyTorch's expand.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/张量变换/Broadcast.md (A2: dim 1 or 2, axis 0 or 1,
int8_t / uint8_t / half / float; dim 2 axis 0 needs srcShape[1] 32-byte aligned); signature
include/adv_api/pad/broadcast.h:47-74; minimum sharedTmpBuffer GetBroadCastMaxMinTmpSize
(impl/adv_api/tiling/pad/broadcast_tiling.cpp:29-75,126-157). A broadcast is a copy: compared bit for bit."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().with_suffix(".cpp")
TYPES = {0: np.float32, 1: np.float16, 2: np.int8}


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("broadcast", headers_digest()), "broadcast")


def min_tmp(size, dst, src):
    """GetBroadCastMaxMinTmpSize's minimum on A2, as broadcast_tiling.cpp computes it."""
    al = lambda x, a: -(-x // a) * a  # noqa: E731
    srcn, dstn = int(np.prod(src)), int(np.prod(dst))
    cast, ts = 0, size
    if size == 1:
        ts, cast = 2, (al(srcn, 16) + al(dstn, 16)) * 2
    if srcn == dstn or srcn == 1:
        return cast + 32 if size == 1 else 0
    if src[1] != 1:
        return 32 + cast
    blk = 32 // ts
    return blk * blk * ts + cast + (0 if dst[1] % blk == 0 else blk * al(dst[1], blk) * ts)


def run(mod, typ, dst, src, tmp, axis=0, older=0, x=None, poison=0):
    dt = TYPES[typ]
    dim = len(dst)
    d2, s2 = (list(dst) + [1])[:2], (list(src) + [1])[:2]
    if x is None:
        rng = np.random.default_rng(sum(dst) + 7 * sum(src))
        x = (rng.integers(-100, 100, int(np.prod(src))) if typ == 2 else rng.standard_normal(int(np.prod(src)))).astype(dt)
    sb, db = -(-x.nbytes // 32) * 32, -(-int(np.prod(dst)) * x.itemsize // 32) * 32
    xs = np.zeros(sb, np.uint8)
    xs[:x.nbytes] = x.view(np.uint8)
    out = np.zeros(db, np.uint8)
    t = np.array([dim, axis, typ, d2[0], d2[1], s2[0], s2[1], tmp, older, poison], np.uint32)
    mod.brc_call([xs, out, t.view(np.uint8).copy()], block_dim=1)
    return x, out[:int(np.prod(dst)) * x.itemsize].view(dt)


CASES = [  # (dst, src, axis)
    ((64,), (1,), 0),
    ((8, 16), (8, 1), 1), ((5, 13), (5, 1), 1), ((3, 40), (3, 1), 1),   # axis 1, aligned and not
    ((6, 16), (1, 16), 0), ((4, 64), (1, 64), 0),                      # axis 0 (srcShape[1] aligned)
    ((4, 32), (4, 32), 1),                                             # nothing to broadcast
]


# every valid A2 call of CASES x type (dim 2 / axis 0 needs srcShape[1] 32-byte aligned: tested apart below)
VALID = [(t, *c) for t in TYPES for c in CASES
         if not (c[2] == 0 and len(c[0]) == 2 and c[1][0] != c[0][0] and c[1][1] * np.dtype(TYPES[t]).itemsize % 32)]


@pytest.mark.parametrize("typ,dst,src,axis", VALID)
def test_broadcast_matches_torch_expand(mod, typ, dst, src, axis):
    size = np.dtype(TYPES[typ]).itemsize
    need = min_tmp(size, (list(dst) + [1])[:2], (list(src) + [1])[:2])
    for tmp, older in ((max(need, 32), 0), (max(need, 32), 1), (0, 0)):
        x, got = run(mod, typ, dst, src, tmp, axis, older)
        want = torch.from_numpy(x.reshape(src)).expand(*dst).contiguous().numpy().ravel()
        np.testing.assert_array_equal(got, want)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    need = min_tmp(4, (5, 13), (5, 1))
    assert need == 8 * 8 * 4 + 8 * 16 * 4  # brcb block plus the unaligned copy buffer
    with pytest.raises(EmulatorError) as e:
        run(mod, 0, (5, 13), (5, 1), need - 32, axis=1)
    assert e.value.rule == "tensor-bounds" and e.value.call == "Broadcast"
    assert "GetBroadCastMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_broadcast.cpp")
    run(mod, 0, (5, 13), (5, 1), need, axis=1)  # exactly the minimum is enough


def test_axis_zero_needs_an_aligned_row(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 0, (4, 12), (1, 12), 64, axis=0)
    assert e.value.rule == "api-argument" and "32-byte aligned" in e.value.detail


def test_shapes_that_cannot_broadcast_are_refused(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 0, (4, 16), (2, 1), 2048, axis=1, x=np.ones(2, np.float32))
    assert e.value.rule == "api-argument" and "srcShape[0]" in e.value.detail
    with pytest.raises(EmulatorError) as e:   # the template's axis disagrees with the shapes
        run(mod, 0, (4, 16), (4, 1), 2048, axis=0)
    assert e.value.rule == "api-argument" and "axis" in e.value.detail



def test_poison_flows_from_the_source_lane(mod):
    """rows 8..15 of a (16, 1) float source are never written: the first poisoned dst element is row 8's first"""
    with pytest.raises(EmulatorError) as e:
        run(mod, 0, (16, 8), (16, 1), 2048, axis=1, poison=1)
    # reported where the result leaves UB, as raw bytes: byte 256 is float element 64, row 8's first
    assert (e.value.rule, e.value.call) == ("ub-uninitialized", "DataCopy") and "element 256 " in e.value.detail
