"""CreateVecIndex (opkit_emu/vec_index.h) against a numpy model of how CANN's A2 code builds the sequence
(impl/basic_api/dav_c220/kernel_operator_vec_createvecindex_impl.h at mirror-cann/asc-devkit 82b89a15): the first
DataBlock from the scalar unit, each further DataBlock / repeat an Adds in the element type of the one before.
Page: 数据填充/CreateVecIndex.md (count or repeatTime 0: NOP); masks as 掩码.md."""
from __future__ import annotations

import numpy as np
import pytest

KERNELS = {np.int16: "i16", np.float16: "f16", np.int32: "i32", np.float32: "f32"}
N = 1024
SENTINEL = 7
BITS = (0x00FF00FF00FF00F0, 0x8000000000000001)


def first_plus(dt, first, off):
    """The scalar unit's firstValue + offset (in float for half / float)."""
    if np.issubdtype(dt, np.integer):
        return np.array(int(first) + off).astype(dt)
    return dt(np.float32(first) + np.float32(off))


def step(dt, x, k):
    """One Adds lane in the element type: x + k (integers wrap)."""
    if np.issubdtype(dt, np.integer):
        return np.array(int(x) + k).astype(dt)
    return dt(np.float32(x) + np.float32(k))


def count_ref(dt, first, count):
    first = np.array(first).astype(dt)[()]  # the kernel's firstValue is a T
    pb, lanes = 32 // np.dtype(dt).itemsize, 256 // np.dtype(dt).itemsize
    y = np.full(N, SENTINEL, dt)
    for i in range(count):
        if i < pb:
            y[i] = first_plus(dt, first, i)
        elif i < lanes:
            y[i] = step(dt, y[i - pb], pb)       # the DataBlock before plus a DataBlock's elements
        else:
            y[i] = step(dt, y[i - lanes], lanes)  # the repeat before plus a repeat's elements
    return y


def l0_ref(dt, first, active, reps, bs, rs, bit_mask):
    first = np.array(first).astype(dt)[()]
    pb, lanes = 32 // np.dtype(dt).itemsize, 256 // np.dtype(dt).itemsize
    y = np.full(N, SENTINEL, dt)
    prev = None
    for r in range(reps):
        cur = np.zeros(lanes, dt)
        for lane in range(lanes):
            if r > 0:
                cur[lane] = step(dt, prev[lane], lanes)
            elif lane < pb or bit_mask:                       # the bit-mask form: the whole first repeat by scalar
                cur[lane] = first_plus(dt, first, lane)
            else:
                cur[lane] = step(dt, cur[lane - pb], pb)
        for lane in active:
            y[(r * rs + (lane // pb) * bs) * pb + lane % pb] = cur[lane]
        prev = cur
    return y


def call(emu, dt, first, args):
    y = np.full(N, SENTINEL, dt)
    getattr(emu("vec_index"), KERNELS[dt])([np.array([first], dt), np.array(args, np.int32), y])
    return y


@pytest.mark.parametrize("dt,first,count", [(np.int16, -5, 300), (np.float16, 2041, 1000), (np.float16, 32700, 1000), (np.int32, 1 << 30, 1024),
                                            (np.float32, 0.5, 777), (np.float16, 0, 12)])
def test_count_form(emu, dt, first, count):
    np.testing.assert_array_equal(call(emu, dt, first, [0, count, 0, 0, 0]), count_ref(dt, first, count))


def test_half_steps_round_as_the_device_adds(emu):
    # From 16384 half's spacing is 16: the DataBlock-by-DataBlock (+16) and repeat-by-repeat (+128) adds round at
    # each step, so the sequence is not the directly rounded firstValue + i (114 of these 1000 differ).
    y = call(emu, np.float16, 16001, [0, 1000, 0, 0, 0])
    direct = (np.float32(np.float16(16001)) + np.arange(1000, dtype=np.float32)).astype(np.float16)
    assert (y[:1000] != direct).sum() == 114
    np.testing.assert_array_equal(y, count_ref(np.float16, 16001, 1000))


@pytest.mark.parametrize("dt,mask,reps,bs,rs", [(np.float16, 40, 3, 2, 20), (np.float32, 20, 3, 2, 20),
                                                (np.int16, 200, 2, 1, 8), (np.int32, 64, 4, 1, 9)])
def test_level0_continuous_mask(emu, dt, mask, reps, bs, rs):
    lanes = 256 // np.dtype(dt).itemsize
    got = call(emu, dt, 3, [1, mask, reps, bs, rs])
    np.testing.assert_array_equal(got, l0_ref(dt, 3, range(min(mask, lanes)), reps, bs, rs, False))


@pytest.mark.parametrize("dt", [np.float16, np.int32])
def test_level0_bit_mask(emu, dt):
    lanes = 256 // np.dtype(dt).itemsize
    active = [lane for lane in range(lanes) if (BITS[lane // 64] >> (lane % 64)) & 1]
    got = call(emu, dt, 100, [2, 0, 3, 1, 8])
    np.testing.assert_array_equal(got, l0_ref(dt, 100, active, 3, 1, 8, True))


@pytest.mark.parametrize("args", [[0, 0, 0, 0, 0], [1, 64, 0, 1, 8], [1, 0, 2, 1, 8]])
def test_nothing_written_for_count_repeat_or_mask_zero(emu, args):
    np.testing.assert_array_equal(call(emu, np.float32, 1, args), np.full(N, SENTINEL, np.float32))


# The count form for three types; half 2040 + i (spacing 2 above 2048) equals the stepped sequence there.
def test_index_ramps_per_type(emu):
    out = np.zeros(3 * 320, np.float32)
    emu("vec_index").vec_index([out])
    np.testing.assert_array_equal(out[:300], np.arange(300, dtype=np.float32) + 2.5)
    assert (out[300:320] == 0).all()
    np.testing.assert_array_equal(out[320:640].view(np.int32)[:300], np.arange(-7, 293, dtype=np.int32))
    # half: 2040 + i rounded to half precision (spacing 2 above 2048)
    np.testing.assert_array_equal(out[640:], (2040 + np.arange(320, dtype=np.float64)).astype(np.float16).astype(np.float32))
