"""Data movement (facts sheet §2): DataCopy (count, DataCopyParams in 32-byte units, UB->UB),
DataCopyPad in both directions (GM strides in bytes, UB strides in 32-byte blocks, padding, dummy fill),
SetAtomicAdd accumulation across blocks, scalar Get/SetValue, views and ReinterpretCast."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError

RNG = np.random.default_rng(3)


def pad_tiling(bc, bl, ss, ds, oss, ods, is_pad=0, left=0, right=0, value=0.0) -> np.ndarray:
    t = np.array([bc, bl, ss, ds, oss, ods, is_pad, left, right, 0], np.uint32)
    t.view(np.float32)[9] = value
    return t.view(np.uint8)


def pad_reference(src, bc, bl, ss, ds, oss, ods, is_pad, left, right, value):
    """UB image after Duplicate(-1) + DataCopyPad(GM->UB), and GM after DataCopyPad(UB->GM)."""
    ub = np.full(2048, -1.0, np.float32).view(np.uint8)
    s = src.view(np.uint8)
    out = np.zeros(4096, np.uint8)
    if bc == 0 or bl == 0:  # documented no-op
        return ub.view(np.float32), out
    lp, rp = left * 4, right * 4
    row = -(-(lp + bl + rp) // 32) * 32
    for b in range(bc):
        uo, go = b * (row + ds * 32), b * (bl + ss)
        data = s[go:go + bl]
        fill = np.float32(value) if is_pad else data[:4].view(np.float32)[0]
        ub[uo:uo + row] = np.full(row // 4, fill, np.float32).view(np.uint8)
        ub[uo + lp:uo + lp + bl] = data
    opitch = -(-bl // 32) * 32 + oss * 32
    for b in range(bc):
        out[b * (bl + ods):b * (bl + ods) + bl] = ub[b * opitch:b * opitch + bl]
    return ub.view(np.float32), out


PAD_CASES = [
    (1, 4 * 13, 0, 0, 0, 0, 0, 0, 0, 0.0),      # one unaligned row, dummy fill = first element
    (3, 4 * 10, 8, 1, 0, 12, 0, 0, 0, 0.0),     # byte strides on GM, block strides on UB
    (4, 4 * 7, 4, 0, 1, 4, 1, 2, 3, 9.5),       # left/right padding with a value
    (2, 4 * 8, 0, 0, 0, 0, 1, 0, 0, 3.0),       # aligned rows, isPad
    (5, 4 * 33, 12, 2, 2, 0, 0, 0, 0, 0.0),
    (0, 4 * 8, 0, 0, 0, 0, 0, 0, 0, 0.0),       # blockCount 0: no-op
    (2, 0, 0, 0, 0, 0, 0, 0, 0, 0.0),           # blockLen 0: no-op
]


@pytest.mark.parametrize("case", PAD_CASES)
def test_datacopypad_both_directions(emu, case):
    src = RNG.standard_normal(1024).astype(np.float32)
    img, out = np.zeros(2048, np.float32), np.zeros(4096, np.uint8)
    st = emu("datacopy").pad_roundtrip([src, img, out, pad_tiling(*case)])
    ref_img, ref_out = pad_reference(src, *case)
    np.testing.assert_array_equal(img, ref_img)
    np.testing.assert_array_equal(out, ref_out)
    bc, bl = case[0], case[1]
    assert st["gm_read_bytes"] == 40 + (bc * bl if bc and bl else 0)
    assert st["gm_write_bytes"] == 8192 + (bc * bl if bc and bl else 0)


def test_datacopypad_undefined_padding_is_poison(emu):
    # isPad=false with left/right padding: the docs call the padding values undefined.
    src = RNG.standard_normal(1024).astype(np.float32)
    with pytest.raises(EmulatorError) as e:
        emu("datacopy").pad_roundtrip([src, np.zeros(2048, np.float32), np.zeros(4096, np.uint8),
                                       pad_tiling(1, 16, 0, 0, 0, 0, 0, 2, 0)])
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy"


@pytest.mark.parametrize("bc,bl,sg,dg", [(1, 4, 0, 0), (3, 2, 1, 2), (8, 1, 3, 0), (2, 5, 0, 7), (0, 4, 0, 0)])
def test_datacopy_params_strided(emu, bc, bl, sg, dg):
    src = RNG.standard_normal(8192).astype(np.float16)
    out = np.zeros(8192, np.float16)
    st = emu("datacopy").strided([src, out, np.array([bc, bl, sg, dg], np.uint16).view(np.uint8)])
    ref = np.zeros(8192, np.float16)
    blk = 16  # halves per 32-byte block
    for b in range(bc):
        o = b * (bl + sg) * blk
        ref[o:o + bl * blk] = src[o:o + bl * blk]
    np.testing.assert_array_equal(out, ref)
    assert st["gm_read_bytes"] == 8 + bc * bl * 32 and st["gm_write_bytes"] == bc * bl * 32


def test_atomic_add_across_blocks_deterministic(emu):
    blocks = 13
    rows = RNG.standard_normal((blocks, 40)).astype(np.float32)
    init = RNG.standard_normal(40).astype(np.float32)
    results = []
    for threads in (1, 2, 5):
        acc = init.copy()
        emu("datacopy").atomic_rows([rows, acc, None], block_dim=blocks, threads=threads)
        results.append(acc)
    ref = init.copy()
    for b in range(blocks):  # applied in block order
        ref = (ref + rows[b]).astype(np.float32)
    for r in results:
        np.testing.assert_array_equal(r, ref)


def test_scalar_access_views_reinterpret(emu):
    x = np.arange(24, dtype=np.float32) * 1.5
    y, bits = np.zeros(24, np.float32), np.zeros(8, np.int32)
    emu("datacopy").scalar_views([x, y, bits, None])
    np.testing.assert_array_equal(y, x[::-1])
    np.testing.assert_array_equal(bits, x[::-1][16:24].view(np.int32))


def test_disable_dma_atomic_turns_the_add_off(emu):
    """DisableDmaAtomic (asc-devkit 82b89a15 impl/basic_api/kernel_operator_set_atomic_intf_impl.h:59): after it,
    a copy to GM overwrites again."""
    x = np.arange(64, dtype=np.float32)
    acc = np.full(64, 5.0, np.float32)
    emu("datacopy").atomic_disabled([x, acc])
    np.testing.assert_array_equal(acc, x)
