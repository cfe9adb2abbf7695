"""half / bfloat16_t conversion (exhaustive) and Cast with every RoundMode of the chip's table.

Facts sheet §3 "Cast" (modes, saturation, A2 table), §7 (the emulator supplies its own half/bf16).
References are numpy / torch, with directed modes derived independently from the two neighbouring
representable values of each input.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

RNG = np.random.default_rng(1234)
NONE, RINT, FLOOR, CEIL, ROUND, TRUNC, ODD = range(7)
MODE_NAMES = {NONE: "NONE", RINT: "RINT", FLOOR: "FLOOR", CEIL: "CEIL", ROUND: "ROUND", TRUNC: "TRUNC", ODD: "ODD"}


def tiling(count: int, mode: int) -> np.ndarray:
    return np.array([count, mode], dtype=np.int32).view(np.uint8).copy()


def bits16(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16)


def torch_bf16_bits(x: np.ndarray) -> np.ndarray:
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def float_sample(n: int) -> np.ndarray:
    """Random float32 bit patterns (all exponents) plus normal-range values."""
    raw = RNG.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([raw, RNG.standard_normal(n).astype(np.float32) * 1000])


# ---- exhaustive scalar conversion -------------------------------------------------------------

def test_half_to_float_all_65536(emu):
    m = emu("types")
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    ours = m.half_to_float(h)
    ref = h.view(np.float16).astype(np.float32)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(ours), nan)
    assert np.array_equal(ours[~nan].view(np.uint32), ref[~nan].view(np.uint32))  # signed zeros, subnormals, inf


def test_bf16_to_float_all_65536(emu):
    m = emu("types")
    b = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    ours = m.bf16_to_float(b)
    ref = torch.from_numpy(b.view(np.int16)).view(torch.bfloat16).float().numpy()
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(ours), nan)
    assert np.array_equal(ours[~nan].view(np.uint32), ref[~nan].view(np.uint32))


def test_half_roundtrip_all_65536(emu):
    m = emu("types")
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    assert np.array_equal(m.float_to_half(m.half_to_float(h)), h)  # NaN payloads included


def _ties_and_edges_half() -> np.ndarray:
    h = np.arange(0, 0x7c00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = (h[:-1] + h[1:]) / 2                      # exact ties (12 significant bits fit a float32)
    over = np.array([65504, 65519.996, 65520, 65535, 65536, 1e6, 3.4e38, np.inf])
    tiny = np.array([2.0**-25, 2.0**-25 * 1.0000001, 2.0**-24 * 1.5, 2.0**-26, 6.1e-5])
    v = np.concatenate([mids, over, tiny]).astype(np.float32)
    return np.concatenate([v, -v])


def test_float_to_half_rne_sample(emu):
    m = emu("types")
    x = np.concatenate([float_sample(1_000_000), _ties_and_edges_half()])
    ours = m.float_to_half(x)
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16)  # IEEE: ties to even, overflow to inf
    nan = np.isnan(x)
    assert np.array_equal(ours[~nan], bits16(ref[~nan]))
    assert np.all(np.isnan(ours[nan].view(np.float16)))


def test_float_to_bf16_rne_sample(emu):
    m = emu("types")
    b = np.arange(0, 0x7f80, dtype=np.uint32)
    lo = (b << 16).view(np.float32).astype(np.float64)
    mids = ((lo[:-1] + lo[1:]) / 2).astype(np.float32)      # exact ties
    x = np.concatenate([float_sample(1_000_000), mids, -mids, np.array([3.4e38, 3.3961e38, np.inf], np.float32)])
    ours = m.float_to_bf16(x)
    ref = torch_bf16_bits(x)
    nan = np.isnan(x)
    assert np.array_equal(ours[~nan], ref[~nan])
    assert np.all(np.isnan(m.bf16_to_float(ours[nan])))


# ---- Cast kernel with RoundModes ------------------------------------------------------------

def directed(x: np.ndarray, rne_mag_bits, bits_value, mode: int, max_bits: int, inf_bits: int) -> np.ndarray:
    """Reference rounding of finite float64 x to a 16/32-bit float format: picks between the two
    neighbouring representable magnitudes per mode. Finite overflow follows the A2 (910B) default, Inf/NaN
    mode: IEEE rounding, so beyond the largest finite value the upper neighbour is inf (weighed as the next
    power of two for ties), and only modes rounding towards the largest finite value stay finite."""
    mag = np.abs(x)
    np.seterr(over="ignore")
    a = rne_mag_bits(mag).astype(np.int64)         # round-to-nearest-even magnitude
    v = bits_value(a)
    lo = np.where(v > mag, a - 1, a)
    hi = np.where(v < mag, a + 1, a)
    exact = lo == hi
    vlo, vhi = bits_value(lo), bits_value(hi)
    vhi = np.where(hi >= inf_bits, 2.0 ** (np.floor(np.log2(bits_value(max_bits))) + 1), vhi)
    neg = np.signbit(x)
    if mode in (NONE, RINT):
        r = a
    elif mode == TRUNC:
        r = lo
    elif mode == FLOOR:
        r = np.where(neg, hi, lo)
    elif mode == CEIL:
        r = np.where(neg, lo, hi)
    elif mode == ROUND:
        r = np.where(mag - vlo < vhi - mag, lo, hi)   # ties away from zero
    elif mode == ODD:
        r = np.where(exact, a, np.where(lo % 2 == 1, lo, hi))
    sign = np.where(neg, 1 << (15 if inf_bits < 65536 else 31), 0)
    return (r | sign).astype(np.uint64)


def half_val(b):
    return np.asarray(b, dtype=np.uint16).view(np.float16).astype(np.float64)


def half_rne(m):
    return m.astype(np.float16).view(np.uint16)


def bf16_val(b):
    return (np.asarray(b, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)


def bf16_rne(m):
    return torch_bf16_bits(m.astype(np.float32))


def cast_inputs(n=5001) -> np.ndarray:
    x = np.concatenate([RNG.standard_normal(n) * 3, RNG.standard_normal(n) * 1e-5, RNG.standard_normal(n) * 7e4,
                        np.array([0.5, 1.5, 2.5, -0.5, -2.5, 65504, 65519, 65520, 70000, -70000, 1e-8, 0.0, -0.0])])
    return x.astype(np.float32)


@pytest.mark.parametrize("mode", [NONE, RINT, FLOOR, CEIL, ROUND, TRUNC, ODD])
def test_cast_float_to_half_modes(emu, mode):
    m = emu("types")
    x = np.concatenate([cast_inputs(), _ties_and_edges_half()[:-2]])  # finite inputs
    x = x[np.isfinite(x)]
    y = np.zeros(x.size, np.float16)
    m.cast_f32_f16([x, y, tiling(x.size, mode)])
    ref = directed(x.astype(np.float64), half_rne, half_val, mode, 0x7bff, 0x7c00)
    bad = np.nonzero(y.view(np.uint16) != ref.astype(np.uint16))[0]
    assert bad.size == 0, f"{MODE_NAMES[mode]}: {bad.size} mismatches, first x={x[bad[0]]!r}"


@pytest.mark.parametrize("mode", [RINT, FLOOR, CEIL, ROUND, TRUNC])
def test_cast_float_to_bf16_modes(emu, mode):
    m = emu("types")
    x = np.concatenate([cast_inputs(), np.array([3.3961e38, -3.3961e38, 3.4e38], np.float32)])
    y = np.zeros(x.size, np.uint16)
    m.cast_f32_bf16([x, y, tiling(x.size, mode)])
    ref = directed(x.astype(np.float64), bf16_rne, bf16_val, mode, 0x7f7f, 0x7f80)
    bad = np.nonzero(y != ref.astype(np.uint16))[0]
    assert bad.size == 0, f"{MODE_NAMES[mode]}: {bad.size} mismatches, first x={x[bad[0]]!r}"


@pytest.mark.parametrize("mode", [NONE, ODD])
def test_cast_float_to_bf16_rejects_none_and_odd(emu, mode):
    x = np.ones(16, np.float32)
    with pytest.raises(EmulatorError) as e:
        emu("types").cast_f32_bf16([x, np.zeros(16, np.uint16), tiling(16, mode)])
    assert e.value.rule == "dtype-unsupported" and e.value.call == "Cast"
    assert e.value.file.endswith("test_types.cpp") and e.value.line > 0


@pytest.mark.parametrize("n", [1, 17, 129, 1000])
def test_cast_half_and_bf16_to_float_exact(emu, n):
    m = emu("types")
    h = RNG.integers(0, 65536, n).astype(np.uint16)
    h = h[~np.isnan(h.view(np.float16))]
    y = np.zeros(h.size, np.float32)
    m.cast_f16_f32([h, y, tiling(h.size, NONE)])
    assert np.array_equal(y, h.view(np.float16).astype(np.float32))
    b = RNG.integers(0, 65536, n).astype(np.uint16)
    b = b[~np.isnan(m.bf16_to_float(b))]
    y = np.zeros(b.size, np.float32)
    m.cast_bf16_f32([b, y, tiling(b.size, NONE)])
    assert np.array_equal(y, m.bf16_to_float(b))


def test_cast_half_to_float_only_none(emu):
    with pytest.raises(EmulatorError) as e:
        emu("types").cast_f16_f32([np.ones(16, np.float16), np.zeros(16, np.float32), tiling(16, RINT)])
    assert e.value.rule == "dtype-unsupported"
    assert "CAST_RINT" in e.value.detail


def int_round(x: np.ndarray, mode: int) -> np.ndarray:
    if mode in (NONE, RINT):
        return np.rint(x)
    if mode == FLOOR:
        return np.floor(x)
    if mode == CEIL:
        return np.ceil(x)
    if mode == TRUNC:
        return np.trunc(x)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)  # ROUND: ties away from zero


@pytest.mark.parametrize("mode", [RINT, FLOOR, CEIL, ROUND, TRUNC])
def test_cast_float_to_ints_and_integral(emu, mode):
    m = emu("types")
    x = np.concatenate([cast_inputs(), np.array([3e9, -3e9, 40000, -40000, 2.5, -3.5], np.float32)])
    r = int_round(x.astype(np.float64), mode)
    for fn, dt in (("cast_f32_i32", np.int32), ("cast_f32_i16", np.int16), ("cast_f32_i64", np.int64)):
        y = np.zeros(x.size, dt)
        getattr(m, fn)([x, y, tiling(x.size, mode)])
        info = np.iinfo(dt)
        assert np.array_equal(y, np.clip(r, info.min, info.max).astype(dt)), fn
    y = np.zeros(x.size, np.float32)
    m.cast_f32_f32([x, y, tiling(x.size, mode)])
    assert np.array_equal(y, r.astype(np.float32))


@pytest.mark.parametrize("mode", [NONE, RINT, FLOOR, CEIL, TRUNC, ROUND])
def test_cast_int32_to_float(emu, mode):
    m = emu("types")
    i = np.concatenate([RNG.integers(-2**31, 2**31 - 1, 20001), np.array([2**24 + 1, 2**24 + 3, -(2**24 + 1), 0, 7])]).astype(np.int32)
    y = np.zeros(i.size, np.float32)
    m.cast_i32_f32([i, y, tiling(i.size, mode)])
    f64 = i.astype(np.float64)
    ref = directed(f64, lambda v: v.astype(np.float32).view(np.uint32), lambda b: np.asarray(b, np.uint32).view(np.float32).astype(np.float64),
                   mode, 0x7f7fffff, 0x7f800000)
    assert np.array_equal(y.view(np.uint32), ref.astype(np.uint32))


@pytest.mark.parametrize("mode", [NONE, RINT, FLOOR, TRUNC])
def test_cast_half_to_small_ints(emu, mode):
    m = emu("types")
    h = np.concatenate([RNG.standard_normal(999) * 100, [127.5, 128, -129, 255.5, 300, -0.5]]).astype(np.float16)
    r = int_round(h.astype(np.float64), mode)
    for fn, dt in (("cast_f16_i8", np.int8), ("cast_f16_u8", np.uint8)):
        y = np.zeros(h.size, dt)
        getattr(m, fn)([h, y, tiling(h.size, mode)])
        info = np.iinfo(dt)
        assert np.array_equal(y, np.clip(r, info.min, info.max).astype(dt)), fn
    if mode != NONE:
        y = np.zeros(h.size, np.int32)
        m.cast_f16_i32([h, y, tiling(h.size, mode)])
        assert np.array_equal(y, r.astype(np.int32))


def test_cast_counts_repeats_of_larger_type(emu):
    m = emu("types")
    x = np.ones(200, np.float32)
    st = m.cast_f32_f16([x, np.zeros(200, np.float16), tiling(200, RINT)])
    assert st["op_elems"]["Cast"] == 200
    assert st["gm_read_bytes"] == 800 + 8 and st["gm_write_bytes"] == 400  # data + the 8-byte tiling struct
    assert st["vector_repeats"] == 4  # 200 floats = 800 B -> 4 repeats of 256 B (facts §3: larger type)


def test_cast_float_to_half_and_bf16_specials(emu):
    m = emu("types")
    x = np.array([np.inf, -np.inf, np.nan, 1e9, -1e9, 65519.0, 65520.0, 0.0, -0.0] * 3, np.float32)  # > 8: SIMD path too
    y = np.zeros(x.size, np.float16)
    m.cast_f32_f16([x, y, tiling(x.size, RINT)])
    # 910B (A2) runs in Inf/NaN mode by default (CANN aclrtFloatOverflowMode): a finite overflow rounds to
    # +-inf like IEEE RNE (65519 still rounds down to 65504; 65520 is the tie that goes to inf).
    exp = np.array([np.inf, -np.inf, np.nan, np.inf, -np.inf, 65504, np.inf, 0.0, -0.0] * 3, np.float16)
    np.testing.assert_array_equal(y, exp)
    assert np.array_equal(np.signbit(y), np.signbit(exp))
    b = np.zeros(x.size, np.uint16)
    m.cast_f32_bf16([x, b, tiling(x.size, RINT)])
    got = m.bf16_to_float(b)
    assert np.isposinf(got[0]) and np.isneginf(got[1]) and np.isnan(got[2])
    assert got[3] == np.float32(998244352.0) and got[5] == 65536.0 and np.signbit(got[8])  # RNE of 1e9


# ---- the rest of the A2 Cast table (Cast.md, mirror-cann/asc-devkit 7359511d) ----------------------
def run_cast(emu, fn, x, out_dt, mode):
    y = np.zeros(x.size, out_dt)
    getattr(emu("types"), fn)([x, y, tiling(x.size, mode)])
    return y


def test_cast_small_ints_to_half_and_float_exact(emu):
    for fn, dt in (("cast_i8_f16", np.int8), ("cast_u8_f16", np.uint8)):
        x = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1).astype(dt)
        assert np.array_equal(run_cast(emu, fn, x, np.float16, NONE), x.astype(np.float16)), fn
    x = np.arange(-32768, 32768).astype(np.int16)
    assert np.array_equal(run_cast(emu, "cast_i16_f32", x, np.float32, NONE), x.astype(np.float32))


@pytest.mark.parametrize("mode", [NONE, RINT, FLOOR, CEIL, ROUND, TRUNC])
def test_cast_int16_to_half_modes(emu, mode):
    x = np.arange(-32768, 32768).astype(np.int16)  # above 2048 half has gaps: the mode decides
    y = run_cast(emu, "cast_i16_f16", x, np.float16, mode)
    ref = directed(x.astype(np.float64), half_rne, half_val, mode, 0x7bff, 0x7c00)
    assert np.array_equal(y.view(np.uint16), ref.astype(np.uint16))


@pytest.mark.parametrize("mode", [RINT, FLOOR, CEIL, TRUNC])
def test_cast_half_to_int16_and_bf16_to_int32(emu, mode):
    h = np.concatenate([RNG.standard_normal(999) * 1000, [32767.0, 40000, -40000, -0.5, 2.5]]).astype(np.float16)
    y = run_cast(emu, "cast_f16_i16", h, np.int16, mode)
    assert np.array_equal(y, np.clip(int_round(h.astype(np.float64), mode), -32768, 32767).astype(np.int16))
    b = torch_bf16_bits(np.concatenate([RNG.standard_normal(999) * 1e5, [3e9, -3e9, 2.5, -2.5]]).astype(np.float32))
    y = run_cast(emu, "cast_bf16_i32", b.astype(np.uint16), np.int32, mode)
    assert np.array_equal(y, np.clip(int_round(bf16_val(b), mode), -2**31, 2**31 - 1).astype(np.int32))


def test_cast_between_integer_widths_saturates(emu):
    # Cast.md is silent on out-of-range int32 -> int16 / int64 -> int32; the emulator saturates (docs/emulator.md)
    i = np.concatenate([RNG.integers(-2**31, 2**31 - 1, 999), [32767, 32768, -32769]]).astype(np.int32)
    assert np.array_equal(run_cast(emu, "cast_i32_i16", i, np.int16, NONE), np.clip(i, -32768, 32767).astype(np.int16))
    assert np.array_equal(run_cast(emu, "cast_i32_i64", i, np.int64, NONE), i.astype(np.int64))
    w = np.concatenate([RNG.integers(-2**40, 2**40, 999), [2**31, -2**31 - 1, 5]]).astype(np.int64)
    assert np.array_equal(run_cast(emu, "cast_i64_i32", w, np.int32, NONE), np.clip(w, -2**31, 2**31 - 1).astype(np.int32))


@pytest.mark.parametrize("mode", [RINT, FLOOR, CEIL, ROUND, TRUNC])
def test_cast_int64_to_float_modes(emu, mode):
    w = np.concatenate([RNG.integers(-2**52, 2**52, 2001), [2**24 + 1, -(2**24 + 3), 0]]).astype(np.int64)
    y = run_cast(emu, "cast_i64_f32", w, np.float32, mode)
    ref = directed(w.astype(np.float64), lambda v: v.astype(np.float32).view(np.uint32),
                   lambda b: np.asarray(b, np.uint32).view(np.float32).astype(np.float64), mode, 0x7f7fffff, 0x7f800000)
    assert np.array_equal(y.view(np.uint32), ref.astype(np.uint32))


def test_cast_int32_to_half_dequantises_with_unit_scale(emu):
    # int32 -> half ignores the mode and multiplies by the SetDeqScale scale (1 until set), rounding to nearest even
    i = np.concatenate([RNG.integers(-70000, 70000, 999), [2049, 2051, 65519, 65520]]).astype(np.int32)
    y = run_cast(emu, "cast_i32_f16", i, np.float16, TRUNC)
    assert np.array_equal(y, i.astype(np.float64).astype(np.float16))
