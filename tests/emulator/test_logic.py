"""Bitwise ops, compares against a scalar, Select in every mode, Gather / GatherMask, Duplicate(dst, src),
TQueSync and the queue members of TBuf, against the official pages with numpy references.

Pages (mirror-cann/asc-devkit 7359511d, docs/api/SIMD-API/基础API/Memory矢量计算/):
  逻辑计算/And.md, Or.md, Not.md, ShiftLeft.md, ShiftRight.md (signed: arithmetic, unsigned: logical;
    roundEn adds the last bit shifted out);
  比较与选择/Compares.md, Compare.md (one bit per element, little-endian in a byte; count x sizeof(T) a
    multiple of 256 B), Select.md (bit 1 takes src0; VSEL_CMPMASK_SPR reuses the first 256/sizeof(T)
    bits every repeat, the other modes consume the mask continuously), GatherMask.md (patterns 1..7,
    user pattern, kept elements packed, rsvdCnt);
  离散与聚合/Gather.md (dst[i] = src[(base + offset[i]) / sizeof(T)]); 数据填充/Duplicate.md (src[0]);
  docs/api/.../同步控制 TQueSync and include/basic_api/kernel_tpipe.h (TBuf's TQueBind members).
Level-0 addressing: level0_ref.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from level0_ref import at, flat_lanes, lane_index, lanes_of, plan
from opkit.errors import EmulatorError

(AND, OR, NOT, SHL, SHR, SHR_ROUND, AND_L0, NOT_L0, SHL_L0, SHR_L0, CMPS, CMP_SCALAR, CMPS_L0, CMP_L0, SEL, SEL_L0,
 SEL_SCALAR_L0, GATHER, GATHER_L0, GM_BUILTIN, GM_USER, DUP_TENSOR, QUEUES) = range(23)
KERNEL = {np.float32: "logic_f32", np.float16: "logic_f16", np.int32: "logic_i32", np.int16: "logic_i16",
          np.uint16: "logic_u16", np.uint32: "logic_u32"}
N = 2048
SENTINEL = 0x5A
RNG = np.random.default_rng(12)
LT, GT, EQ, LE, GE, NE = range(6)
CMP = {LT: np.less, GT: np.greater, EQ: np.equal, LE: np.less_equal, GE: np.greater_equal, NE: np.not_equal}
MASKS = [(1, 0xFFFF_0000_F0F0_1357, 0x8000_0000_0000_0003, 3), (0, 50, 0, 2)]  # (how, lo, hi, repeat)
GEOMS = [dict(dblk=1, s0blk=1, s1blk=1, drep=8, s0rep=8, s1rep=8),
         dict(dblk=2, s0blk=1, s1blk=2, drep=16, s0rep=9, s1rep=17)]


def tiling(op, mode=0, lo=0, hi=0, repeat=1, dblk=1, s0blk=1, s1blk=1, drep=8, s0rep=8, s1rep=8, shift=0,
           reduce_mode=0, scalar=0.0, count=N):
    rec = np.zeros(1, dtype=[("op", "<i4"), ("mode", "<i4"), ("lo", "<u8"), ("hi", "<u8"), ("g", "<i4", 7),
                             ("shift", "<i4"), ("rm", "<i4"), ("scalar", "<f4"), ("n", "<u4"), ("count", "<u4")])
    rec["op"], rec["mode"], rec["lo"], rec["hi"] = op, mode, lo, hi
    rec["g"] = [repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep]
    rec["shift"], rec["rm"], rec["scalar"], rec["n"], rec["count"] = shift, reduce_mode, scalar, N, count
    return rec.view(np.uint8)


def run(emu, dt, a, b=None, c=None, **kw):
    out = np.full(N * np.dtype(dt).itemsize, SENTINEL, np.uint8).view(dt)
    info = np.zeros(4, np.int64)
    b = a if b is None else b
    c = np.zeros(N, np.uint32) if c is None else c
    getattr(emu("logic"), KERNEL[dt])([a, b, c, out, info, tiling(**kw)])
    return out, info


def sentinel(dt):
    return np.full(N * np.dtype(dt).itemsize, SENTINEL, np.uint8).view(dt)


def ints(dt):
    info = np.iinfo(dt)
    return RNG.integers(info.min, info.max, N, endpoint=True).astype(dt)


def floats(dt):
    return (RNG.integers(-6, 6, N) * 0.5).astype(dt)  # repeated values so EQ/LE/GE are exercised


@pytest.mark.parametrize("dt", [np.int16, np.uint16])
def test_and_or_not(emu, dt):
    a, b = ints(dt), ints(dt)
    for op, fn in ((AND, lambda: a & b), (OR, lambda: a | b), (NOT, lambda: ~a)):
        got, _ = run(emu, dt, a, b, op=op, count=1000)
        ref = sentinel(dt)
        ref[:1000] = fn()[:1000]
        np.testing.assert_array_equal(got, ref)
    how, lo, hi, rep = MASKS[0]  # the kernel passes the bit-array form (continuous: test_level0)
    pl = plan(dt, how, lo, hi, rep)
    for g in GEOMS:
        for op in (AND_L0, NOT_L0):
            got, _ = run(emu, dt, a, b, op=op, lo=lo, hi=hi, repeat=rep, **g)
            ref = sentinel(dt)
            x = a[lane_index(dt, pl, g["s0blk"], g["s0rep"])]
            y = b[lane_index(dt, pl, g["s1blk"], g["s1rep"])]
            ref[lane_index(dt, pl, g["dblk"], g["drep"])] = (x & y) if op == AND_L0 else ~x
            np.testing.assert_array_equal(got, ref, err_msg=f"op {op} {g}")


def shift_ref(dt, a, s, left, round_en=False):
    w = a.astype(np.int64)
    if left:
        return (w << s).astype(np.uint64).astype(dt) if np.dtype(dt).kind == "u" else (w << s).astype(dt)
    r = w >> s
    if round_en and s > 0:
        r = r + ((w >> (s - 1)) & 1)
    return r.astype(dt)


@pytest.mark.parametrize("dt", [np.int16, np.uint16, np.int32, np.uint32])
def test_shifts(emu, dt):
    a = ints(dt)
    width = 8 * np.dtype(dt).itemsize
    for s in (0, 1, 5, width - 1, width):
        for op, left in ((SHL, True), (SHR, False)):
            got, _ = run(emu, dt, a, op=op, shift=s, count=777)
            ref = sentinel(dt)
            ref[:777] = shift_ref(dt, a, s, left)[:777]
            np.testing.assert_array_equal(got, ref, err_msg=f"shift {s} left={left}")
    how, lo, hi, rep = MASKS[0]
    hi = hi if lanes_of(dt) > 64 else 0
    pl = plan(dt, how, lo, hi, rep)
    g = GEOMS[1]
    for op, left, rnd in ((SHL_L0, True, False), (SHR_L0, False, False), (SHR_ROUND, False, True)):
        got, _ = run(emu, dt, a, op=op, shift=3, lo=lo, hi=hi, repeat=rep, **g)
        ref = sentinel(dt)
        x = a[lane_index(dt, pl, g["s0blk"], g["s0rep"])]
        ref[lane_index(dt, pl, g["dblk"], g["drep"])] = shift_ref(dt, x, 3, left, rnd and np.dtype(dt).kind == "i")
        np.testing.assert_array_equal(got, ref, err_msg=f"op {op}")


def test_shift_out_of_range_is_reported(emu):
    with pytest.raises(EmulatorError) as e:
        run(emu, np.int16, ints(np.int16), op=SHL, shift=17, count=16)
    assert e.value.rule == "api-argument" and "shift 17 is outside [0, 16]" in str(e.value)


def bits_ref(dt, cmp_bits_at, out_bytes):
    """Sets/clears bit k of the output bytes for every (k, value)."""
    o = out_bytes.copy()
    for k, v in cmp_bits_at:
        o[k >> 3] = (o[k >> 3] | (1 << (k & 7))) if v else (o[k >> 3] & ~(1 << (k & 7)) & 0xFF)
    return o


@pytest.mark.parametrize("dt", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [LT, GT, EQ, LE, GE, NE])
def test_compares(emu, dt, mode):
    a, b = floats(dt), floats(dt)
    s = 0.5
    count = 512
    for op in (CMPS, CMP_SCALAR):
        got, _ = run(emu, dt, a, op=op, mode=mode, scalar=s, count=count)
        ref = sentinel(dt).view(np.uint8).copy()
        ref[:count // 8] = np.packbits(CMP[mode](a[:count].astype(np.float64), s), bitorder="little")
        np.testing.assert_array_equal(got.view(np.uint8), ref)
    how, lo, hi, rep = MASKS[0]
    hi = hi if lanes_of(dt) > 64 else 0
    pl = plan(dt, how, lo, hi, rep)
    for op in (CMPS_L0, CMP_L0):
        g = GEOMS[1]
        got, _ = run(emu, dt, a, b, op=op, mode=mode, scalar=s, lo=lo, hi=hi, repeat=rep, **g)
        x = a[lane_index(dt, pl, g["s0blk"], g["s0rep"])].astype(np.float64)
        y = s if op == CMPS_L0 else b[lane_index(dt, pl, g["s1blk"], g["s1rep"])].astype(np.float64)
        ref = bits_ref(dt, zip(flat_lanes(dt, pl), CMP[mode](x, y)), sentinel(dt).view(np.uint8))
        np.testing.assert_array_equal(got.view(np.uint8), ref, err_msg=f"op {op}")


def test_int32_compares_eq(emu):
    a = RNG.integers(-3, 3, N).astype(np.int32)
    got, _ = run(emu, np.int32, a, op=CMPS, mode=EQ, scalar=1.0, count=N)
    np.testing.assert_array_equal(got.view(np.uint8)[:N // 8], np.packbits(a == 1, bitorder="little"))
    with pytest.raises(EmulatorError) as e:
        run(emu, np.int32, a, op=CMPS, mode=LT, scalar=1.0, count=N)
    assert e.value.rule == "dtype-unsupported"


def test_compares_length_rule(emu):
    with pytest.raises(EmulatorError) as e:
        run(emu, np.float32, floats(np.float32), op=CMPS, mode=LT, count=100)
    assert e.value.rule == "compare-length"


SPR, TS, TT = 0, 1, 2


@pytest.mark.parametrize("dt", [np.float32, np.float16])
@pytest.mark.parametrize("mode", [SPR, TS, TT])
def test_select_count_form(emu, dt, mode):
    a, b = floats(dt), floats(dt)
    c = RNG.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    bits = np.unpackbits(c.view(np.uint8), bitorder="little").astype(bool)
    count = 1000
    got, _ = run(emu, dt, a, b, c, op=SEL, mode=mode, scalar=2.5, count=count)
    k = np.arange(count) % lanes_of(dt) if mode == SPR else np.arange(count)
    ref = sentinel(dt)
    ref[:count] = np.where(bits[k], a[:count], dt(2.5) if mode == TS else b[:count])
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dt", [np.float32, np.float16])
@pytest.mark.parametrize("op,mode", [(SEL_L0, SPR), (SEL_L0, TT), (SEL_SCALAR_L0, TS)])
def test_select_level0(emu, dt, op, mode):
    a, b = floats(dt), floats(dt)
    c = RNG.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    bits = np.unpackbits(c.view(np.uint8), bitorder="little").astype(bool)
    how, lo, hi, rep = MASKS[0]
    hi = hi if lanes_of(dt) > 64 else 0
    pl = plan(dt, how, lo, hi, rep)
    for g in GEOMS:
        got, _ = run(emu, dt, a, b, c, op=op, mode=mode, scalar=-1.5, lo=lo, hi=hi, repeat=rep, **g)
        k = flat_lanes(dt, pl) % lanes_of(dt) if mode == SPR else flat_lanes(dt, pl)
        x = a[lane_index(dt, pl, g["s0blk"], g["s0rep"])]
        y = dt(-1.5) if mode == TS else b[lane_index(dt, pl, g["s1blk"], g["s1rep"])]
        ref = sentinel(dt)
        ref[lane_index(dt, pl, g["dblk"], g["drep"])] = np.where(bits[k], x, y)
        np.testing.assert_array_equal(got, ref, err_msg=f"{g}")


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int16])
def test_gather(emu, dt):
    a = floats(dt) if np.dtype(dt).kind == "f" else ints(dt)
    idx = RNG.integers(0, N, N)
    c = (idx * np.dtype(dt).itemsize).astype(np.uint32)
    got, _ = run(emu, dt, a, c=c, op=GATHER, count=999)
    ref = sentinel(dt)
    ref[:999] = a[idx[:999]]
    np.testing.assert_array_equal(got, ref)
    how, lo, hi, rep = MASKS[0]
    hi = hi if lanes_of(dt) > 64 else 0
    pl = plan(dt, how, lo, hi, rep)
    got, _ = run(emu, dt, a, c=c, op=GATHER_L0, lo=lo, hi=hi, repeat=rep, drep=9)
    ref = sentinel(dt)
    ref[lane_index(dt, pl, 1, 9)] = a[idx[flat_lanes(dt, pl)]]
    np.testing.assert_array_equal(got, ref)
    with pytest.raises(EmulatorError) as e:
        run(emu, dt, a, c=c + 1, op=GATHER, count=8)
    assert e.value.rule == "ub-alignment"


def pattern_lanes(p, lanes):
    l = np.arange(lanes)
    return {1: l % 2 == 0, 2: l % 2 == 1, 3: l % 4 == 0, 4: l % 4 == 1, 5: l % 4 == 2, 6: l % 4 == 3, 7: l >= 0}[p]


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.uint16])
def test_gather_mask(emu, dt):
    a = floats(dt) if np.dtype(dt).kind == "f" else ints(dt)
    L = lanes_of(dt)
    g = dict(s0blk=2, s0rep=17, s1rep=1, repeat=3)
    for p in range(1, 8):
        for reduce_mode, per in ((0, L), (1, L - 5)):
            got, info = run(emu, dt, a, op=GM_BUILTIN, mode=p, reduce_mode=reduce_mode, lo=per, **g)
            keep = [at(dt, r, l, 2, 17) for r in range(3) for l in range(per) if pattern_lanes(p, L)[l]]
            ref = sentinel(dt)
            ref[:len(keep)] = a[keep]
            assert info[0] == len(keep)
            np.testing.assert_array_equal(got, ref, err_msg=f"pattern {p} reduceMode {reduce_mode}")
    c = RNG.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    bits = np.unpackbits(c.view(np.uint8), bitorder="little").astype(bool)
    got, info = run(emu, dt, a, c=c, op=GM_USER, reduce_mode=0, **g)
    keep = [at(dt, r, l, 2, 17) for r in range(3) for l in range(L) if bits[r * 256 + l]]  # src1RepeatStride 1 block
    ref = sentinel(dt)
    ref[:len(keep)] = a[keep]
    assert info[0] == len(keep)
    np.testing.assert_array_equal(got, ref)
    with pytest.raises(EmulatorError) as e:
        run(emu, dt, a, op=GM_BUILTIN, mode=9, **g)
    assert e.value.rule == "api-argument"


def test_duplicate_from_tensor(emu):
    a = floats(np.float16)
    got, _ = run(emu, np.float16, a, op=DUP_TENSOR, count=300)
    ref = sentinel(np.float16)
    ref[:300] = a[16]  # x[32 bytes]
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_tque_sync_tbuf_members_and_output_parameter_forms(emu, dt):
    _, info = run(emu, dt, floats(dt), op=QUEUES, scalar=1.0)
    assert info[1] == 256 // np.dtype(dt).itemsize and info[2] == N
