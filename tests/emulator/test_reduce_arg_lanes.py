"""ReduceMax / ReduceMin's index loop (opkit_emu/reduce.h reduce_arg_loop) keeps four vectors of the build's widest
(64 lanes at x86-64-v4, 32 at v3, 16 below): at every ISA level up to this host's, whichever host this is, it must
return the sequential scan's index (reduce_arg_probe.cpp: ties, signed zeros across lanes, infinities, NaNs; float,
half, bfloat16; max and min; built rows where the extreme is -0 in one chain and +0 at the same lane of a later
step of another, which the chain merge must resolve to the smaller index)."""
from __future__ import annotations

import subprocess

import pytest

from conftest import HOST_LEVELS, build_probe


@pytest.mark.parametrize("level", HOST_LEVELS)
def test_reduce_arg_loop_is_the_sequential_scan(level, tmp_path):
    exe = build_probe("reduce_arg_probe", level, tmp_path)
    rows, bad = map(int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split())
    assert rows == 4000 + 3 * 3 * 3 * 2 * 2 * 3 * 2  # random rows, then built_rows
    assert bad == 0, f"{bad} indices differ from the sequential scan at {level}"
