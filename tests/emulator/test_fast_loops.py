"""The emulator's fast element loops give bitwise what their plain definitions give (test_fast_loops.cpp):
Exp is the host's expf (every 97th float bit pattern, every half and bfloat16), ReduceSum's float tree is the pairwise
tree of facts §3, ReduceMax/ReduceMin's index is the sequential scan's (ties, inf, signed zeros; a NaN: the first
NaN's), and the three APIs in a kernel agree with those definitions."""
from __future__ import annotations

import numpy as np

from conftest import expected_exp_lanes


def test_exp_is_the_host_expf_bitwise(emu):
    mod = emu("fast_loops")
    # the loop under test is the widest this CPU has (16 lanes with AVX-512F, 8 with AVX2 + FMA), not a narrower
    # one or the per-element fallback: a failing self-check or a dispatch slip would otherwise only cost speed
    assert mod.exp_vector_lanes() == expected_exp_lanes()
    tested, mismatches = mod.exp_sweep(97)
    assert tested > 44_000_000
    assert mismatches == 0


def test_half_and_bf16_exp_are_expf_rounded_bitwise(emu):
    mod = emu("fast_loops")
    assert mod.exp_f16_mismatches() == 0
    assert mod.exp_bf16_mismatches() == 0


def test_reduce_sum_tree_is_the_pairwise_tree(emu):
    assert emu("fast_loops").tree_mismatches(200_000) == 0


def test_reduce_max_min_index_is_the_sequential_scan(emu):
    mod = emu("fast_loops")
    assert mod.arg_mismatches_f32(20_000) == 0
    assert mod.arg_mismatches_f16(20_000) == 0


def test_reduce_max_min_index_with_signed_zeros_across_lanes(emu):
    # ±0, ±1, ±inf, NaN, n < 100: a 0 extreme held as -0 in one lane and +0 at a smaller index in another
    mod = emu("fast_loops")
    assert mod.arg_small_alphabet_mismatches_f32(100_000) == 0
    assert mod.arg_small_alphabet_mismatches_f16(100_000) == 0
    assert mod.arg_small_alphabet_mismatches_bf16(100_000) == 0


def test_apis_agree_with_the_plain_definitions(emu):
    mod = emu("fast_loops")
    rng = np.random.default_rng(3)
    for n in (8, 64, 1000, 4099):
        x = (rng.standard_normal(n) * 10).astype(np.float32)
        x[rng.integers(0, n)] = 90.0          # off expf's main path
        e, s, mx = np.zeros(n, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32)
        mod.api_f32([x, e, s, mx, np.array([n], np.uint32).view(np.uint8)])
        pe, ps, pi = mod.plain_f32(x)
        assert e.view(np.uint32).tolist() == pe.view(np.uint32).tolist()
        assert s.view(np.uint32)[0] == np.float32(ps).view(np.uint32)
        assert mx.view(np.uint32)[1] == pi and mx[0] == x[pi]
