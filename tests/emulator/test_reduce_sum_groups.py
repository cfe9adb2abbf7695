"""ReduceSum's float loop (opkit_emu/reduce.h reduce_sum_loop) sums whole repeats level by level across up to 16
of them in the build's widest vectors (SSE at the baseline, 32-byte AVX at x86-64-v3, 64-byte at x86-64-v4): it
must give the bits of its definition -- each repeat's adjacent-pair tree, the repeats' results added in order, every
add under the NaN rule (reduce_sum_probe.cpp) -- for every count 1..2112 and random ones up to 6000, NaNs of both
signs and payloads, infinities, unaligned starts. Compiled at -O2 at the baseline, x86-64-v3 where the host has it
and the host's level, whichever host this is (each a different vector width of the loop)."""
from __future__ import annotations

import subprocess

import pytest

from conftest import HERE, base_flags
from opkit.toolchain import isa


def _levels() -> list[str]:
    names = isa.levels()
    host = isa.host_level()
    # x86-64-v2 (SSE4.2) uses the baseline's 16-byte form; v3 is the 32-byte one
    mid = [lvl for lvl in ("x86-64-v3",) if lvl in names and names.index(lvl) <= names.index(host)]
    return sorted({isa.baseline(), *mid, host})


@pytest.mark.parametrize("level", _levels())
def test_reduce_sum_loop_is_its_definition_bitwise(level, tmp_path):
    exe = tmp_path / "probe"
    cmd = base_flags() + ["-O2", *isa.flags(level), str(HERE / "reduce_sum_probe.cpp"), "-o", str(exe), "-lpthread"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    rows, bad = map(int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split())
    assert rows == 6000
    assert bad == 0, f"{bad} of {rows} sums differ from the tree written out at {level}"
