"""ReduceSum / ReduceMax / ReduceMin, level-0 form (asc-devkit 归约计算/ReduceSum.md, ReduceMax.md,
ReduceMin.md): mask and srcRepStride select the lanes of every repeat, repeatTime may exceed 255, the result
(and for max/min the lowest index among equal values, in T's bits) goes to dst; sums reduce each repeat as
a pairwise tree and then the per-repeat results the same way."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_reduce_repeats.cpp"


def run(emu, op, mask, repeats, stride, loaded=8192, x=None):
    x = np.random.default_rng(7).standard_normal(8192).astype(np.float32) if x is None else x
    out = np.zeros(8, np.float32)
    tiling = np.array([op, mask, repeats, stride, loaded], np.int32).view(np.uint8)
    emu("reduce_repeats").reduce_repeats([x, out, tiling], block_dim=1)
    return x, out


def lanes(x, mask, repeats, stride):
    """Each repeat's 64 lanes (stride in 32-byte blocks of 8 floats), 0 where masked off."""
    rows = []
    for r in range(repeats):
        row = x[r * stride * 8:r * stride * 8 + 64].copy()
        if mask == -1:
            row[1::2] = 0
        else:
            row[mask:] = 0
        rows.append(row)
    return rows


def tree(v):
    v = list(v) + [0.0] * (64 - len(v))
    v = np.array(v, np.float32)
    while len(v) > 1:
        v = (v[0::2] + v[1::2]).astype(np.float32)
    return v[0]


@pytest.mark.parametrize("mask,repeats,stride", [(64, 4, 8), (20, 3, 8), (64, 100, 8), (-1, 5, 8), (16, 300, 2),
                                                 (16, 10, 4)])
def test_sum_is_a_tree_per_repeat_then_over_repeats(emu, mask, repeats, stride):
    x, out = run(emu, 0, mask, repeats, stride)
    parts = np.array([tree(r) for r in lanes(x, mask, repeats, stride)], np.float32)
    while len(parts) > 1:
        parts = np.array([tree(parts[i:i + 64]) for i in range(0, len(parts), 64)], np.float32)
    assert out[0] == parts[0]
    np.testing.assert_allclose(out[0], np.concatenate(lanes(x, mask, repeats, stride)).astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("op,pick", [(1, np.argmax), (2, np.argmin)])
def test_max_and_min_with_their_index(emu, op, pick):
    x = np.random.default_rng(1).standard_normal(8192).astype(np.float32)
    x[130] = x[700] = 50.0 if op == 1 else -50.0   # a tie: the lower index wins
    _, out = run(emu, op, 64, 20, 8, x=x)
    active = x[:64 * 20]
    assert out[0] == active[pick(active)]
    assert out[1:2].view(np.uint32)[0] == 130


@pytest.mark.parametrize("op", [1, 2], ids=["max", "min"])
def test_a_nan_lane_gives_nan_and_the_first_nans_index(emu, op):
    # the emulator's rule (opkit_emu/reduce.h reduce_arg_loop; CANN documents it for later chips' reductions only,
    # Reg矢量计算/归约计算/Reduce.md:158): not checked on an A2 device
    x = np.random.default_rng(1).standard_normal(8192).astype(np.float32)
    x[300] = x[900] = np.nan
    _, out = run(emu, op, 64, 20, 8, x=x)
    assert np.isnan(out[0]) and out[1:2].view(np.uint32)[0] == 300


def test_half_source(emu):
    x, out = run(emu, 3, 128, 2, 8, loaded=256)
    np.testing.assert_allclose(out[0], x[:256].astype(np.float16).astype(np.float64).sum(), rtol=2e-3)


def test_unwritten_lane_poisons_the_result(emu):
    with pytest.raises(EmulatorError) as e:
        run(emu, 0, 64, 4, 8, loaded=200)   # lanes 200..255 were never written
    line = next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith("// REDUCE:out"))
    assert (e.value.rule, e.value.line) == ("ub-uninitialized", line)


def test_mask_past_the_lanes_counts_as_all_and_zero_is_a_nop(emu):
    # 掩码.md: a continuous mask above a repeat's lanes counts as all of them; mask 0 selects none (a NOP)
    x, out = run(emu, 0, 65, 3, 8)
    _, full = run(emu, 0, 64, 3, 8, x=x)
    assert out[0] == full[0]
    _, none = run(emu, 1, 0, 3, 8, x=x + 10.0)   # every lane >= ~5: any computed max would be far from 0
    assert none[0] == 0.0 and none[1] == 0.0    # dst untouched (the kernel zero-fills it first)
