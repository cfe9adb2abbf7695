"""Exp's vector loops (opkit_emu/host_expf.h) give the host's expf bitwise -- each loop this CPU can run, called
directly (exp_paths_probe.cpp), since Exp itself runs only the widest: loop_fma (AVX2 + FMA) and loop_512 (AVX-512F),
every 97th float bit pattern and every short length at every start offset, the probe built at every ISA level this
host can run (a module built at x86-64-v3 / v4 compiles the loops with its own -march). A loop the CPU lacks is
reported, not run; which ones must run is read from /proc/cpuinfo (conftest.cpu_flags)."""
from __future__ import annotations

import subprocess

import pytest

from conftest import HOST_LEVELS, build_probe, cpu_flags, glibc_x86_64


@pytest.mark.skipif(not glibc_x86_64(), reason="the vector loops are x86-64 glibc's expf")
@pytest.mark.parametrize("level", HOST_LEVELS)
def test_each_exp_loop_is_the_host_expf_bitwise(level, tmp_path):
    exe = build_probe("exp_paths_probe", level, tmp_path)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    rows = {name: (int(ran), int(tested), int(bad)) for name, ran, tested, bad in (r.split() for r in out if r)}
    flags = cpu_flags()
    assert rows["loop_fma"][0] == int({"avx2", "fma"} <= flags)
    assert rows["loop_512"][0] == int("avx512f" in flags)
    for name, (ran, tested, bad) in rows.items():
        if ran:
            assert tested > 44_000_000, name
            assert bad == 0, f"{name}: {bad} of {tested} differ from expf"
