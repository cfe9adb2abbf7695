"""Exp's vector loops (opkit_emu/host_expf.h) give the host's expf bitwise -- each loop this CPU can run, called
directly (exp_paths_probe.cpp), since Exp itself runs only the widest: loop_fma (AVX2 + FMA) and loop_512 (AVX-512F),
every 97th float bit pattern and every short length at every start offset. A loop the CPU lacks is reported, not
run; on glibc x86-64 with AVX2 + FMA at least loop_fma must have run."""
from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

from conftest import build_probe


def _flags() -> set[str]:
    cpuinfo = Path("/proc/cpuinfo")
    return set(cpuinfo.read_text().split()) if cpuinfo.exists() else set()


@pytest.mark.skipif(platform.machine() != "x86_64" or platform.libc_ver()[0] != "glibc",
                    reason="the vector loops are x86-64 glibc's expf")
def test_each_exp_loop_is_the_host_expf_bitwise(tmp_path):
    exe = build_probe("exp_paths_probe", "x86-64", tmp_path)  # the loops pick their instructions themselves
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    rows = {name: (int(ran), int(tested), int(bad)) for name, ran, tested, bad in (r.split() for r in out if r)}
    flags = _flags()
    assert rows["loop_fma"][0] == int({"avx2", "fma"} <= flags)
    assert rows["loop_512"][0] == int("avx512f" in flags)
    for name, (ran, tested, bad) in rows.items():
        if ran:
            assert tested > 44_000_000, name
            assert bad == 0, f"{name}: {bad} of {tested} differ from expf"
