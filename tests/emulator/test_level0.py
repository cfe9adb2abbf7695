"""Level-0 vector forms against the official API docs, with numpy references in float64.

Doc pages (mirror-cann/asc-devkit 7359511d, docs/api/SIMD-API/基础API/Memory矢量计算/):
  SIMD计算说明/高维切分.md, SIMD计算说明/掩码/接口内设置Mask.md, 掩码操作/SetVectorMask.md,
  掩码操作/SetMaskCount.md (addressing and masks: level0_ref.py), 基础算术/Add.md (and Sub, Mul, Div, Max, Min, Adds, Muls, Maxs, Mins,
  Exp, Abs, Sqrt, Relu, LeakyRelu), 数据填充/Duplicate.md, 数据填充/Brcb.md,
  归约计算/WholeReduceSum.md, WholeReduceMax.md, WholeReduceMin.md, BlockReduceSum.md,
  BlockReduceMax.md, BlockReduceMin.md, PairReduceSum.md.
What the pages say and the reference below encodes (addressing and masks: level0_ref.py):
  - masked-off dst lanes keep their value;
  - WholeReduceSum / BlockReduceSum / PairReduceSum add in a binary tree, two by two; WholeReduceMax/Min
    write [value, index] (ORDER_VALUE_INDEX), [index, value], [value] or [index (uint32)];
    dstRepStride units: one result (Whole), 8 elements (Block), 128 bytes (Pair);
  - Brcb: src element 8r+j fills DataBlock j of repeat r of dst.
"""
from __future__ import annotations

import numpy as np
import pytest

from level0_ref import at, lane_index, lanes_of, plan
from opkit.errors import EmulatorError

(ADD, SUB, MUL, DIV, MAX, MIN, ADDS, MULS, MAXS, MINS, EXP, ABS, SQRT, RELU, LEAKY, DUP,
 WSUM, WMAX, WMIN, BSUM, BMAX, BMIN, PSUM, BRCB) = range(24)
KERNEL = {np.float32: "l0_f32", np.float16: "l0_f16", np.int32: "l0_i32", np.int16: "l0_i16"}
N = 2048
RNG = np.random.default_rng(10)
SENTINEL = -7


def tiling(op, how, lo, hi, repeat, order=0, dblk=1, s0blk=1, s1blk=1, drep=8, s0rep=8, s1rep=8, scalar=0.0):
    rec = np.zeros(1, dtype=[("op", "<i4"), ("how", "<i4"), ("lo", "<u8"), ("hi", "<u8"), ("repeat", "<i4"),
                             ("order", "<i4"), ("g", "<i4", 6), ("scalar", "<f4"), ("n", "<u4")])
    rec["op"], rec["how"], rec["lo"], rec["hi"], rec["repeat"], rec["order"] = op, how, lo, hi, repeat, order
    rec["g"] = [dblk, s0blk, s1blk, drep, s0rep, s1rep]
    rec["scalar"], rec["n"] = scalar, N
    return rec.view(np.uint8)


def run(emu, dt, a, b, **kw):
    out = np.full(N, SENTINEL, dt)
    getattr(emu("level0"), KERNEL[dt])([a, b, out, tiling(**kw)])
    return out


def data(dt, positive=False):
    if np.issubdtype(dt, np.integer):
        return RNG.integers(-1000, 1000, N).astype(dt)
    x = RNG.standard_normal(N) * 3
    return (np.abs(x) + 0.1 if positive else x).astype(dt)


def cast(dt, v):
    return np.asarray(v).astype(np.int64).astype(dt) if np.issubdtype(dt, np.integer) else np.asarray(v).astype(dt)


ELEM2 = {ADD: np.add, SUB: np.subtract, MUL: np.multiply, DIV: np.divide, MAX: np.maximum, MIN: np.minimum}
ELEMS = {ADDS: np.add, MULS: np.multiply, MAXS: np.maximum, MINS: np.minimum}
ELEM1 = {EXP: np.exp, ABS: np.abs, SQRT: np.sqrt, RELU: lambda x: np.maximum(x, 0)}


def ref_elementwise(dt, op, a, b, pl, g, scalar):
    out = np.full(N, SENTINEL, dt)
    w = np.int64 if np.issubdtype(dt, np.integer) else np.float64
    x = a[lane_index(dt, pl, g["s0blk"], g["s0rep"])].astype(w)
    y = b[lane_index(dt, pl, g["s1blk"], g["s1rep"])].astype(w)
    s = w(cast(dt, scalar))
    if op in ELEM2:
        v = ELEM2[op](x, y)
    elif op in ELEMS:
        v = ELEMS[op](x, s)
    elif op in ELEM1:
        v = ELEM1[op](x)
    elif op == LEAKY:
        v = np.where(x >= 0, x, x * s)
    else:  # DUP
        v = np.full(x.shape, s)
    out[lane_index(dt, pl, g["dblk"], g["drep"])] = cast(dt, v)
    return out


GEOMS = [dict(dblk=1, s0blk=1, s1blk=1, drep=8, s0rep=8, s1rep=8),
         dict(dblk=2, s0blk=1, s1blk=3, drep=16, s0rep=8, s1rep=24),
         dict(dblk=1, s0blk=2, s1blk=1, drep=10, s0rep=17, s1rep=9)]
# (how, lo, hi, repeat): continuous, bit masks, register (Normal), Counter (argument and register)
MASKS = [(0, 64, 0, 3), (0, 37, 0, 2), (1, 0xF0F0_0000_FFFF_0001, 0, 2), (1, 0x8000_0000_0000_0001, 0x5, 2),
         (2, 0x0123_4567_89AB_CDEF, 0x3, 3), (3, 150, 0, 99), (4, 77, 0, 99)]


# Integer forms exist only where the A2 tables have them (Div/Exp/Abs/Sqrt/LeakyRelu: half, float;
# Relu: half, int32, float); other pairs are compile-time errors (test_rules).
ELEMENTWISE_CASES = [(dt, op) for dt in (np.float32, np.float16, np.int32, np.int16)
                     for op in (ADD, SUB, MUL, DIV, MAX, MIN, ADDS, MULS, MAXS, MINS, EXP, ABS, SQRT, RELU, LEAKY, DUP)
                     if not (np.issubdtype(dt, np.integer) and op in (DIV, EXP, ABS, SQRT, LEAKY))
                     and not (dt == np.int16 and op == RELU)]


@pytest.mark.parametrize("dt,op", ELEMENTWISE_CASES)
def test_elementwise_level0(emu, dt, op):
    integer = np.issubdtype(dt, np.integer)
    a, b = data(dt, positive=op in (SQRT, DIV)), data(dt, positive=op == DIV)
    for how, lo, hi, repeat in MASKS:
        if lanes_of(dt) <= 64 and hi:
            hi = 0  # 32-bit types have one mask word
        for g in GEOMS:
            got = run(emu, dt, a, b, op=op, how=how, lo=lo, hi=hi, repeat=repeat, scalar=-1.5 if not integer else -3,
                      **g)
            ref = ref_elementwise(dt, op, a, b, plan(dt, how, lo, hi, repeat), g, -1.5 if not integer else -3)
            if op == EXP:
                np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=2e-3 if dt == np.float16 else 3e-7)
            else:
                np.testing.assert_array_equal(got, ref, err_msg=f"op {op} mask {(how, lo, hi, repeat)} geom {g}")


def tree_sum(dt, vals):
    v = [np.float64(x) for x in vals]
    while len(v) > 1:
        v = [np.float64(cast(dt, v[2 * i] + v[2 * i + 1])) for i in range(len(v) // 2)]
    return cast(dt, v[0])


def ref_reduce(dt, op, a, pl, g, order):
    L, pb = lanes_of(dt), 32 // np.dtype(dt).itemsize
    out = np.full(N, SENTINEL, dt)
    raw = out.view(np.uint16 if dt == np.float16 else np.uint32)
    for r, act in pl:
        vals = np.zeros(L, np.float64)
        on = np.zeros(L, bool)
        for l in act:
            vals[l], on[l] = a[at(dt, r, l, g["s0blk"], g["s0rep"])], True
        if op == WSUM:
            out[r * g["drep"]] = tree_sum(dt, np.where(on, vals, 0))
        elif op in (WMAX, WMIN):
            cand = np.where(on, vals, -np.inf if op == WMAX else np.inf)
            i = int(np.argmax(cand) if op == WMAX else np.argmin(cand))
            v = cast(dt, vals[i])
            if order == 3:  # index only, uint32 units
                out.view(np.uint32)[r * g["drep"]] = i
            else:
                base = r * g["drep"] * (1 if order == 2 else 2)
                if order == 2:
                    out[base] = v
                else:
                    vi, ii = (base, base + 1) if order == 0 else (base + 1, base)
                    out[vi] = v
                    raw[ii] = i
        else:
            group = pb if op in (BSUM, BMAX, BMIN) else 2
            per = L // group
            for k in range(per):
                sl = slice(k * group, (k + 1) * group)
                if not on[sl].any():
                    continue
                if op in (BSUM, PSUM):
                    v = tree_sum(dt, np.where(on[sl], vals[sl], 0))
                else:
                    cand = np.where(on[sl], vals[sl], -np.inf if op == BMAX else np.inf)
                    v = cast(dt, cand.max() if op == BMAX else cand.min())
                out[r * g["drep"] * per + k] = v
    return out


RED_GEOMS = [dict(drep=1, s0blk=1, s0rep=8), dict(drep=3, s0blk=2, s0rep=20)]


@pytest.mark.parametrize("dt", [np.float32, np.float16])
@pytest.mark.parametrize("op,order", [(WSUM, 2), (WMAX, 0), (WMAX, 1), (WMAX, 2), (WMAX, 3), (WMIN, 0), (WMIN, 1),
                                      (BSUM, 0), (BMAX, 0), (BMIN, 0), (PSUM, 0)])
def test_reductions_level0(emu, dt, op, order):
    a = data(dt)
    for how, lo, hi, repeat in MASKS:
        if lanes_of(dt) <= 64 and hi:
            hi = 0
        for g in RED_GEOMS:
            gg = dict(g, dblk=1, s1blk=1, s1rep=8)
            got = run(emu, dt, a, a, op=op, how=how, lo=lo, hi=hi, repeat=repeat, order=order, **gg)
            ref = ref_reduce(dt, op, a, plan(dt, how, lo, hi, repeat), gg, order)
            np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8),
                                          err_msg=f"op {op} order {order} mask {(how, lo, hi, repeat)} geom {g}")


@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_a_nan_lane_gives_nan_and_the_first_nans_index(emu, dt):
    # The emulator's NaN rule for max / min reductions (opkit_emu/reduce.h, reduce_arg_loop): CANN documents it for
    # the later chips' reductions (Reg矢量计算/归约计算/Reduce.md:158, ReduceDataBlock.md:121: NaN written, the
    # first NaN's index), not for A2's WholeReduceMax / BlockReduceMax -- applied here alike, unchecked on a device.
    a = data(dt).copy()
    a[5] = a[9] = np.nan  # repeat 0: lanes 5 and 9; DataBlocks 0 and 1 of float, 0 of half
    g = dict(drep=1, s0blk=1, s0rep=8, dblk=1, s1blk=1, s1rep=8)
    got = run(emu, dt, a, a, op=WMAX, how=0, lo=64, hi=0, repeat=2, order=0, **g)
    raw = got.view(np.uint16 if dt == np.float16 else np.uint32)
    L = lanes_of(dt)
    assert np.isnan(got[0]) and raw[1] == 5
    r1 = a[L:L + 64]  # repeat 1's 64 active lanes (the mask)
    assert got[2] == r1.max() and raw[3] == np.argmax(r1)
    got = run(emu, dt, a, a, op=WMIN, how=0, lo=64, hi=0, repeat=1, order=0, **g)
    assert np.isnan(got[0]) and got.view(raw.dtype)[1] == 5
    got = run(emu, dt, a, a, op=BMAX, how=0, lo=64, hi=0, repeat=1, order=0, **g)
    pb = 32 // np.dtype(dt).itemsize
    blocks = a[:64].reshape(-1, pb)
    want_nan = np.isnan(blocks).any(axis=1)
    assert (np.isnan(got[:len(blocks)]) == want_nan).all()
    assert (got[:len(blocks)][~want_nan] == blocks[~want_nan].max(axis=1)).all()


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int16])
@pytest.mark.parametrize("dblk,drep", [(1, 8), (2, 16), (1, 9)])
def test_brcb(emu, dt, dblk, drep):
    a = data(dt)
    got = run(emu, dt, a, a, op=BRCB, how=0, lo=1, hi=0, repeat=5, dblk=dblk, drep=drep)
    pb = 32 // np.dtype(dt).itemsize
    ref = np.full(N, SENTINEL, dt)
    for r in range(5):
        for j in range(8):
            s = (r * drep + j * dblk) * pb
            ref[s:s + pb] = a[8 * r + j]
    np.testing.assert_array_equal(got, ref)


# 掩码.md (82b89a15): "in continuous mode a mask beyond the range counts as the type's maximum; mask = 0 makes
# the instruction a NOP"; a bit mask may be all zero (maskLow, maskHigh in [0, 2^64 - 1]): no lane. These are
# legal, so no rule fires.
@pytest.mark.parametrize("how,lo,hi,lanes", [(0, 65, 0, 64), (0, 300, 0, 64), (0, 0, 0, 0), (1, 0, 0, 0)])
def test_masks_outside_the_lane_count(emu, how, lo, hi, lanes):
    a, b = data(np.float32), data(np.float32)
    got = run(emu, np.float32, a, b, op=ADD, how=how, lo=lo, hi=hi, repeat=2)
    want = np.full(N, SENTINEL, np.float32)
    for r in range(2):
        want[r * 64:r * 64 + lanes] = a[r * 64:r * 64 + lanes] + b[r * 64:r * 64 + lanes]
    np.testing.assert_array_equal(got, want)


def test_level0_reads_past_the_tensor_are_reported(emu):
    a = data(np.float32)
    with pytest.raises(EmulatorError) as e:  # 255 repeats of 8 blocks each: 16320 floats > N
        run(emu, np.float32, a, a, op=ADD, how=0, lo=64, hi=0, repeat=255)
    assert e.value.rule == "tensor-bounds"
