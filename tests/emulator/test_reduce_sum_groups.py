"""ReduceSum's float loop (opkit_emu/reduce.h reduce_sum_loop) sums whole repeats level by level across up to 16
of them in 32-byte (x86-64-v3) and 64-byte (x86-64-v4) builds, and a repeat's tree at a time in 16-byte ones
(baseline, x86-64-v2) and for few repeats: it must give the bits of its definition -- each repeat's adjacent-pair
tree, the repeats' results added in order, every add under the NaN rule (reduce_sum_probe.cpp, plain_tree.h) -- for
every count 1..2112 and random ones up to 6000, NaNs of both signs and payloads, infinities, subnormals, overflowing
partial sums, start offsets 0..15. Compiled at -O2 at every ISA level up to this host's, whichever host this is."""
from __future__ import annotations

import subprocess

import pytest

from conftest import HOST_LEVELS, build_probe


@pytest.mark.parametrize("level", HOST_LEVELS)
def test_reduce_sum_loop_is_its_definition_bitwise(level, tmp_path):
    exe = build_probe("reduce_sum_probe", level, tmp_path)
    rows, bad = map(int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split())
    assert rows == 6000
    assert bad == 0, f"{bad} of {rows} sums differ from the tree written out at {level}"
