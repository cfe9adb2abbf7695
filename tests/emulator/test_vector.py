"""Vector compute, count forms (facts sheet §3): exactly `count` elements, any count, compute in float
and round to the operand type; ReduceSum's documented order; ReduceMax/Min index; Compare/Select.
References in float64 (numpy), rounded once to the operand type."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError

# The C++ enum Op of test_vector.cpp, in order (parametrize needs the values before the module is built;
# test_opcodes_are_the_cpp_enum checks this list against the module's py::enum_).
OP_NAMES = ("Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "Exp", "Ln", "Abs", "Sqrt",
            "Rsqrt", "Reciprocal", "Relu", "LeakyRelu", "Duplicate", "ReduceSum", "ReduceMax", "ReduceMin", "OpAdd",
            "OpSub", "OpMul", "OpDiv", "InPlaceAdd")
(ADD, SUB, MUL, DIV, MAX, MIN, ADDS, MULS, MAXS, MINS, EXP, LN, ABS, SQRT, RSQRT, RECIP, RELU, LEAKY, DUP,
 RSUM, RMAX, RMIN, OPADD, OPSUB, OPMUL, OPDIV, INPLACE) = range(len(OP_NAMES))
COUNTS = [1, 7, 64, 100, 129, 1000, 4099]
RNG = np.random.default_rng(7)
KERNEL = {np.float32: "vec_f32", np.float16: "vec_f16", np.int32: "vec_i32", np.int16: "vec_i16"}



def make_tiling(op, count, scalar=0.0, cal_index=0) -> np.ndarray:
    t = np.zeros(4, np.int32)
    t[0], t[1], t[3] = op, count, cal_index
    t.view(np.float32)[2] = scalar
    return t.view(np.uint8)


def run(emu, dt, op, a, b=None, scalar=0.0, cal_index=0, out_n=None):
    n = a.size
    b = np.zeros(n, dt) if b is None else b
    out = np.zeros(max(n, 2), dt)
    stats = getattr(emu("vector"), KERNEL[dt])([a, b, out, make_tiling(op, n, scalar, cal_index)])
    return out[: (out_n or n)], stats


def data(dt, n, positive=False, nonzero=False):
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return RNG.integers(info.min, info.max, n, endpoint=True).astype(dt)
    x = RNG.standard_normal(n) * 4
    if positive:
        x = np.abs(x) + 0.01
    if nonzero:
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    return x.astype(dt)


BINARY = {ADD: np.add, SUB: np.subtract, MUL: np.multiply, MAX: np.maximum, MIN: np.minimum, DIV: np.divide}
SCALAR = {ADDS: np.add, MULS: np.multiply, MAXS: np.maximum, MINS: np.minimum}
OVERLOAD = {OPADD: np.add, OPSUB: np.subtract, OPMUL: np.multiply, OPDIV: np.divide}


def expect(dt, r64):
    if np.issubdtype(dt, np.integer):
        return r64.astype(np.int64).astype(dt)  # two's-complement wrap
    return r64.astype(dt)


# Div has no integer form on A2 (a compile-time error, see test_rules), so integers skip it.
BINARY_CASES = [(dt, op) for dt in (np.float32, np.float16, np.int32, np.int16)
                for op in (ADD, SUB, MUL, MAX, MIN, DIV, OPADD, OPSUB, OPMUL, OPDIV, INPLACE)
                if not (np.issubdtype(dt, np.integer) and op in (DIV, OPDIV))]


@pytest.mark.parametrize("dt,op", BINARY_CASES)
def test_binary_exact(emu, dt, op):
    fn = {**BINARY, **OVERLOAD, INPLACE: np.add}[op]
    for n in COUNTS:
        a, b = data(dt, n), data(dt, n, nonzero=op in (DIV, OPDIV))
        got, st = run(emu, dt, op, a, b)
        ref = expect(dt, fn(a.astype(np.float64) if dt != np.int16 and dt != np.int32 else a.astype(np.int64),
                            b.astype(np.float64) if dt != np.int16 and dt != np.int32 else b.astype(np.int64)))
        np.testing.assert_array_equal(got, ref, err_msg=f"op {op} n={n}")
        assert st["vector_elems"] >= n


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int16])
@pytest.mark.parametrize("op", [ADDS, MULS, MAXS, MINS])
def test_scalar_ops_exact(emu, dt, op):
    for n in COUNTS:
        a = data(dt, n)
        s = 3.0 if np.issubdtype(dt, np.integer) else 1.3
        got, _ = run(emu, dt, op, a, scalar=s)
        sv = np.array(s, dtype=dt)
        wide = np.int64 if np.issubdtype(dt, np.integer) else np.float64
        np.testing.assert_array_equal(got, expect(dt, SCALAR[op](a.astype(wide), sv.astype(wide))))


@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_unary_exact_ops(emu, dt):
    for n in COUNTS:
        a = data(dt, n)
        p = data(dt, n, positive=True)
        nz = data(dt, n, nonzero=True)
        np.testing.assert_array_equal(run(emu, dt, ABS, a)[0], np.abs(a))
        np.testing.assert_array_equal(run(emu, dt, RELU, a)[0], np.maximum(a, 0).astype(dt))
        np.testing.assert_array_equal(run(emu, dt, SQRT, p)[0], np.sqrt(p.astype(np.float64)).astype(dt))
        np.testing.assert_array_equal(run(emu, dt, RECIP, nz)[0], (1.0 / nz.astype(np.float64)).astype(dt))
        np.testing.assert_array_equal(run(emu, dt, LEAKY, a, scalar=0.1)[0],
                                      np.where(a >= 0, a, a.astype(np.float64) * np.float64(dt(0.1))).astype(dt))
        np.testing.assert_array_equal(run(emu, dt, DUP, a, scalar=2.5)[0], np.full(n, 2.5, dt))


def ulp_diff(a, b):
    ia = a.view(np.int16 if a.dtype == np.float16 else np.int32).astype(np.int64)
    ib = b.view(np.int16 if b.dtype == np.float16 else np.int32).astype(np.int64)
    return np.abs(ia - ib)


@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_transcendental_within_2ulp(emu, dt):
    for n in COUNTS:
        a = (data(dt, n) / 2).astype(dt)
        p = data(dt, n, positive=True)
        for op, fn, x in ((EXP, np.exp, a), (LN, np.log, p), (RSQRT, lambda v: 1 / np.sqrt(v), p)):
            got, _ = run(emu, dt, op, x)
            ref = fn(x.astype(np.float64)).astype(dt)
            assert ulp_diff(got, ref).max() <= 2, f"op {op} n={n}"


@pytest.mark.parametrize("dt", [np.int32])
def test_relu_int32(emu, dt):
    a = data(dt, 1000)
    np.testing.assert_array_equal(run(emu, dt, RELU, a)[0], np.maximum(a, 0))


def reduce_sum_reference(x: np.ndarray) -> np.floating:
    """The documented order: adjacent-pair tree inside each 256-byte repeat, repeats added sequentially,
    every addition rounded to the operand type (independent re-implementation)."""
    dt = x.dtype
    rnd = (lambda v: v.astype(np.float16).astype(np.float32)) if dt == np.float16 else (lambda v: v)
    R = 256 // dt.itemsize
    acc = None
    for base in range(0, x.size, R):
        buf = np.zeros(R, np.float32)
        chunk = x[base:base + R].astype(np.float32)
        buf[: chunk.size] = chunk
        while buf.size > 1:
            buf = rnd(buf[0::2] + buf[1::2])
        acc = buf[0] if acc is None else rnd(np.float32(acc + buf[0]))
    return dt.type(acc)


@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_reduce_sum_order(emu, dt):
    for n in COUNTS:
        a = data(dt, n)
        got, _ = run(emu, dt, RSUM, a, out_n=1)
        assert got[0] == reduce_sum_reference(a), f"n={n}"
        assert abs(float(got[0]) - a.astype(np.float64).sum()) <= 1e-3 * np.abs(a.astype(np.float64)).sum() + 1e-6
    # The order is observable: in half, the tree keeps the small terms that a sequential sum would drop.
    a = np.array([2048.0] + [1.0] * 127, np.float16)
    got, _ = run(emu, np.float16, RSUM, a, out_n=1)
    seq = np.float16(0)
    for v in a:
        seq = np.float16(seq + v)
    assert got[0] == reduce_sum_reference(a) and float(got[0]) != float(seq)


@pytest.mark.parametrize("dt", [np.float32, np.float16])
@pytest.mark.parametrize("op,fn", [(RMAX, np.argmax), (RMIN, np.argmin)])
def test_reduce_max_min_with_index(emu, dt, op, fn):
    for n in COUNTS:
        a = data(dt, n)
        if n > 10:
            a[n // 2] = a[3] = (a.max() + 1) if op == RMAX else (a.min() - 1)  # tie: first index wins
        got, _ = run(emu, dt, op, a, cal_index=1, out_n=2)
        idx_bits = got[1:2].view(np.uint16 if dt == np.float16 else np.uint32)[0]
        assert got[0] == a[fn(a)] and idx_bits == fn(a), f"n={n}"
        got1, _ = run(emu, dt, op, a, cal_index=0, out_n=1)
        assert got1[0] == a[fn(a)]


CMP = {0: np.less, 1: np.greater, 2: np.equal, 3: np.less_equal, 4: np.greater_equal, 5: np.not_equal}


@pytest.mark.parametrize("dt,kernel,counts", [(np.float32, "cmpsel_f32", [64, 192, 1024]),
                                              (np.float16, "cmpsel_f16", [128, 384, 2048])])
@pytest.mark.parametrize("mode", list(CMP))
def test_compare_select(emu, dt, kernel, counts, mode):
    m = emu("vector")
    for n in counts:
        a, b = data(dt, n), data(dt, n)
        b[::5] = a[::5]  # some equal pairs
        mask, out = np.zeros(n // 8, np.uint8), np.zeros(n, dt)
        t = np.array([n, mode, 2, 0], np.int32)
        t.view(np.float32)[3] = -7.0
        getattr(m, kernel)([a, b, mask, out, t.view(np.uint8)])
        r = CMP[mode](a, b)
        np.testing.assert_array_equal(mask, np.packbits(r, bitorder="little"))
        np.testing.assert_array_equal(out, np.where(r, a, b))
        t[2] = 1  # VSEL_TENSOR_SCALAR_MODE
        getattr(m, kernel)([a, b, mask, out, t.view(np.uint8)])
        np.testing.assert_array_equal(out, np.where(r, a, dt(-7.0)))


def test_compare_int32_eq_only(emu):
    m = emu("vector")
    a = data(np.int32, 64)
    b = a.copy()
    b[::3] += 1
    mask = np.zeros(8, np.uint8)
    m.cmpsel_i32([a, b, mask, np.zeros(64, np.int32), np.array([64, 2, 2, 0], np.int32).view(np.uint8)])
    np.testing.assert_array_equal(mask, np.packbits(a == b, bitorder="little"))
    with pytest.raises(EmulatorError) as e:
        m.cmpsel_i32([a, b, mask, np.zeros(64, np.int32), np.array([64, 0, 2, 0], np.int32).view(np.uint8)])
    assert e.value.rule == "dtype-unsupported" and e.value.call == "Compare"


def test_select_cmpmask_spr_reuses_the_first_repeat_of_the_mask(emu):
    # Select.md (mirror-cann/asc-devkit 7359511d): mode 0 uses the first 256/sizeof(T) mask bits for every repeat
    a, b = data(np.float32, 128), data(np.float32, 128)
    mask, out = np.zeros(16, np.uint8), np.zeros(128, np.float32)
    emu("vector").cmpsel_f32([a, b, mask, out, np.array([128, 0, 0, 0], np.int32).view(np.uint8)])
    lt = a < b
    np.testing.assert_array_equal(out, np.where(np.concatenate([lt[:64], lt[:64]]), a, b))


def test_counters(emu):
    a = data(np.float32, 100)
    _, st = run(emu, np.float32, ADD, a, a)
    assert st["op_elems"] == {"Add": 100}
    assert st["vector_elems"] == 100 and st["vector_repeats"] == 2  # 400 B -> 2 repeats
    assert st["gm_read_bytes"] == 2 * 400 + 16 and st["gm_write_bytes"] == 400
    assert st["ub_high_water"] == 416 + 416 + 416 + 1024


def test_opcodes_are_the_cpp_enum(emu):
    assert {n: int(v) for n, v in emu("vector").Op.__members__.items()} == {n: i for i, n in enumerate(OP_NAMES)}


# NaN and Inf (issue 10 item 3). The A2 pages of Max/Min/Maxs/Mins/Relu/Compare do not say what a NaN
# operand gives (docs/emulator.md "NaN and Inf"); the emulator takes the conservative choice: NaN
# propagates whichever operand holds it (numpy's maximum/minimum), so NaN in a kernel's data reaches its
# output instead of being silently replaced; Compare follows IEEE (every ordered test false, NE true).
@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_nan_and_inf_through_max_min_relu(emu, dt):
    a = np.array([np.nan, 1, np.nan, -np.inf, np.inf, 2, -1, np.nan, 0, -0.0, 3, -2], dt)
    b = np.array([1, np.nan, np.nan, 5, -5, np.inf, -np.inf, 0, np.nan, 0, -np.inf, np.inf], dt)
    with np.errstate(invalid="ignore"):
        for op, f in ((MAX, np.maximum), (MIN, np.minimum)):
            np.testing.assert_array_equal(run(emu, dt, op, a, b)[0], f(a, b))
            np.testing.assert_array_equal(run(emu, dt, op, b, a)[0], f(b, a))
        for op, f in ((MAXS, np.maximum), (MINS, np.minimum)):
            np.testing.assert_array_equal(run(emu, dt, op, a, scalar=0.5)[0], f(a, dt(0.5)))
            assert np.isnan(run(emu, dt, op, a, scalar=float("nan"))[0]).all()
        np.testing.assert_array_equal(run(emu, dt, RELU, a)[0], np.where(np.isnan(a), a, np.maximum(a, 0)))


@pytest.mark.parametrize("mode", list(CMP))
def test_compare_with_nan_is_ieee(emu, mode):
    a = np.array([np.nan, 1, np.nan, -np.inf, np.inf, 2] * 11, np.float32)[:64]
    b = np.array([1, np.nan, np.nan, -np.inf, 5, np.inf] * 11, np.float32)[:64]
    mask, out = np.zeros(8, np.uint8), np.zeros(64, np.float32)
    t = np.array([64, mode, 2, 0], np.int32)
    emu("vector").cmpsel_f32([a, b, mask, out, t.view(np.uint8)])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(mask, np.packbits(CMP[mode](a, b), bitorder="little"))
