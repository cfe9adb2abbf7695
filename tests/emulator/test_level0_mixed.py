"""Level-0 Cast and compound instructions (opkit_emu/level0_mixed.h) against float64 numpy references, with the
level-0 addressing of level0_ref.py: lanes per repeat of the larger type, each operand's lane l at its own
DataBlock size (Cast.md: "the mask of a conversion counts elements of the larger type"; its half -> int32_t
examples; 复合计算/*.md; mirror-cann/asc-devkit 82b89a15)."""
from __future__ import annotations

import numpy as np
import pytest

from level0_ref import at

RNG = np.random.default_rng(11)
N = 1024
BITS = (0x5555555555555555, 0xF0F0F0F0F0F0F0F0)


def lanes_of(lo, hi, lanes):
    return [l for l in range(lanes) if ((lo >> l) if l < 64 else (hi >> (l - 64))) & 1]


def pairs(d_dt, s_dt, active, reps, drep, srep, dblk=1, sblk=1):
    """(dst index, src index) of every active lane."""
    return [(at(d_dt, r, l, dblk, drep), at(s_dt, r, l, sblk, srep)) for r in range(reps) for l in active]


def fma_f32(x, d, y):
    """x * d + y as the emulator computes it (fused.h): in float, the product rounded before the add. Whether the
    device rounds the product is not documented (docs/emulator.md "Numerics")."""
    return np.float32(np.float32(np.float32(x) * np.float32(d)) + np.float32(y))


def call(emu, kernel, mode, a, b, y):
    getattr(emu("level0_mixed"), kernel)([a, b, y, np.array([mode], np.int32)])
    return y


@pytest.mark.parametrize("mode,mask", [(0, 64), (1, 32)])
def test_cast_half_to_int32(emu, mode, mask):
    a = (RNG.standard_normal(N) * 50).astype(np.float16)
    y = call(emu, "h2i", mode, a, a, np.full(N, -7, np.int32))
    want = np.full(N, -7, np.int32)
    for d, s in pairs(np.int32, np.float16, range(mask), 8, 8, 4):
        want[d] = np.ceil(np.float64(a[s]))
    np.testing.assert_array_equal(y, want)


def test_cast_float_to_half_bit_mask(emu):
    a = (RNG.standard_normal(N) * 1000).astype(np.float32)
    y = call(emu, "f2h", 2, a, a, np.full(N, 3, np.float16))
    want = np.full(N, 3, np.float16)
    for d, s in pairs(np.float16, np.float32, lanes_of(BITS[0], 0, 64), 4, 4, 8):
        t = np.float16(a[s])                       # nearest; TRUNC: step towards zero if it rounded away
        if abs(np.float64(t)) > abs(np.float64(a[s])):
            t = np.nextafter(t, np.float16(0))
        want[d] = t
    np.testing.assert_array_equal(y, want)


def test_cast_counter_mode_register(emu):
    a = RNG.standard_normal(N).astype(np.float32)
    y = call(emu, "f2h", 3, a, a, np.full(N, 3, np.float16))
    want = np.full(N, 3, np.float16)
    for d, s in pairs(np.float16, np.float32, range(64), 2, 4, 8)[:100]:
        want[d] = np.float16(a[s])
    np.testing.assert_array_equal(y, want)


def test_axpy_half_to_float(emu):
    a = RNG.standard_normal(N).astype(np.float16)
    y0 = RNG.standard_normal(N).astype(np.float32)
    y = call(emu, "h2f", 4, a, a, y0.copy())
    want = y0.copy()
    for d, s in pairs(np.float32, np.float16, range(64), 4, 8, 4):
        want[d] = np.float32(0.5 * np.float64(a[s]) + np.float64(y0[d]))
    np.testing.assert_allclose(y, want, rtol=2e-7)


def test_mul_add_dst_half_to_float(emu):
    a, b = RNG.standard_normal(N).astype(np.float16), RNG.standard_normal(N).astype(np.float16)
    y0 = RNG.standard_normal(N).astype(np.float32)
    y = call(emu, "h2f", 5, a, b, y0.copy())
    want = y0.copy()
    for d, s in pairs(np.float32, np.float16, lanes_of(BITS[0], 0, 64), 4, 8, 4):
        want[d] = np.float32(np.float64(a[s]) * np.float64(b[s]) + np.float64(y0[d]))
    np.testing.assert_allclose(y, want, rtol=2e-7)


@pytest.mark.parametrize("kernel,dt", [("f32", np.float32), ("f16", np.float16)])
def test_fused_mul_add_with_repeat_gaps(emu, kernel, dt):
    a, b, y0 = (RNG.standard_normal(N).astype(dt) for _ in range(3))
    y = call(emu, kernel, 6, a, b, y0.copy())
    want = y0.copy()
    for d, s in pairs(dt, dt, range(48), 3, 16, 16):
        want[d] = dt(fma_f32(a[s], y0[d], b[s]))
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("kernel,dt", [("f32", np.float32), ("f16", np.float16)])
def test_fused_mul_add_relu_and_mul_add_relu(emu, kernel, dt):
    a, b, y0 = (RNG.standard_normal(N).astype(dt) for _ in range(3))
    y = call(emu, kernel, 7, a, b, y0.copy())
    want = y0.copy()
    lanes = 256 // np.dtype(dt).itemsize
    first = lanes_of(BITS[0], BITS[1] if lanes > 64 else 0, lanes)
    base = 512 // np.dtype(dt).itemsize * 2
    for off, act in ((0, first), (base, range(64))):
        for d, s in pairs(dt, dt, act, 2, 8, 8):
            want[off + d] = dt(max(fma_f32(a[off + s], y0[off + d], b[off + s]), np.float32(0)))
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("kernel,dt", [("f16", np.float16), ("i16", np.int16), ("f32", np.float32)])
def test_add_relu_sub_relu(emu, kernel, dt):
    if dt == np.int16:
        a, b = RNG.integers(-30000, 30000, N).astype(dt), RNG.integers(-30000, 30000, N).astype(dt)
    else:
        a, b = RNG.standard_normal(N).astype(dt), RNG.standard_normal(N).astype(dt)
    y0 = np.full(N, 5, dt)
    y = call(emu, kernel, 8, a, b, y0.copy())
    want = y0.copy()
    lanes = 256 // np.dtype(dt).itemsize
    half = 512 // np.dtype(dt).itemsize
    for d, s in pairs(dt, dt, range(lanes), 2, 8, 8):
        v = np.int64(a[s]) + np.int64(b[s]) if dt == np.int16 else np.float64(a[s]) + np.float64(b[s])
        v = np.int16(np.int64(v) & 0xFFFF) if dt == np.int16 else dt(v)   # int16 wraps, floats round once
        want[d] = max(v, dt(0))
    for d, s in pairs(dt, dt, lanes_of(BITS[0], BITS[1] if lanes > 64 else 0, lanes), 2, 8, 8):
        v = np.int64(a[half + s]) - np.int64(b[half + s]) if dt == np.int16 else np.float64(a[half + s]) - np.float64(b[half + s])
        v = np.int16(np.int64(v) & 0xFFFF) if dt == np.int16 else dt(v)
        want[half + d] = max(v, dt(0))
    np.testing.assert_array_equal(y, want)
