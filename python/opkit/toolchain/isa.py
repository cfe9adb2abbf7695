"""The vector ISA level the emulator's kernel modules are compiled for (docs/emulator.md "Host ISA").

The host's level (OPKIT_ISA=host), on x86-64: the highest of the named psABI levels the host has -- x86-64 (baseline, SSE2), x86-64-v2 (SSE4.2,
POPCNT), x86-64-v3 (AVX2, FMA, F16C, BMI), x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) -- passed as ``-march=<level>``
(GCC >= 11), not ``-march=native``: a build is then shareable between hosts of one level, and its level is part
of every cache key (a module built at one level is never loaded at another). aarch64: ``armv8-a``, whose
Advanced SIMD (NEON) is mandatory, i.e. the host's vector ISA already (no SVE level is chosen: not measured).
Every compile also gets ``-ffp-contract=off`` (cmake/opkit_emulator.cmake): the device rounds each operation, so
no multiply-add may be fused, whatever the level.

``OPKIT_ISA``: ``host`` (default: the host's level), ``baseline`` (the architecture's baseline, no ``-march``)
or a named level no higher than the host's. The host's level is the default since the element loops choose their
NaN themselves (opkit_emu/nan_rule.h): measured, every case of the bundled library gives the same bytes at
x86-64-v4 as at the baseline (docs/emulator.md "Host ISA"), so the level changes the speed, not a bit.

``python -m opkit.toolchain.isa``: prints the level and its compiler flags (``<level>;<flag>...``, CMake).
"""
from __future__ import annotations

import functools
import os
import platform
import sys
from pathlib import Path

from ..errors import OpkitError

ENV = "OPKIT_ISA"
# psABI x86-64 levels (x86-64-psABI, "Micro-Architecture Levels") and the /proc/cpuinfo flags each adds
X86_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    ("x86-64", frozenset()),
    ("x86-64-v2", frozenset({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})),
    ("x86-64-v3", frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"})),
    ("x86-64-v4", frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})),
)
ARM_BASELINE = "armv8-a"


def _arch(machine: str | None = None) -> str:
    m = (machine or platform.machine()).lower()
    return "aarch64" if m in ("aarch64", "arm64") else "x86_64" if m in ("x86_64", "amd64") else m


def baseline(machine: str | None = None) -> str:
    arch = _arch(machine)
    return "x86-64" if arch == "x86_64" else ARM_BASELINE if arch == "aarch64" else arch


def levels(machine: str | None = None) -> list[str]:
    """The named levels of the architecture, lowest first."""
    return [n for n, _ in X86_LEVELS] if _arch(machine) == "x86_64" else [baseline(machine)]


def host_level(cpu_flags: set[str] | None = None, machine: str | None = None) -> str:
    """The highest level whose flags (and every lower level's) ``cpu_flags`` has; default: this host's."""
    if _arch(machine) != "x86_64":
        return baseline(machine)
    flags = _cpuinfo_flags() if cpu_flags is None else set(cpu_flags)
    best, have = "x86-64", set()
    for name, need in X86_LEVELS:
        have |= need
        if not have <= flags:
            break
        best = name
    return best


@functools.lru_cache(maxsize=1)
def _cpuinfo_flags() -> frozenset[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()      # unknown: the baseline


def level(env: dict | None = None, cpu_flags: set[str] | None = None, machine: str | None = None) -> str:
    """The level kernel modules are built for: OPKIT_ISA (host, the default | baseline | a named level <= the
    host's)."""
    want = (os.environ if env is None else env).get(ENV, "").strip() or "host"
    host = host_level(cpu_flags, machine)
    if want == "host":
        return host
    if want == "baseline":
        return baseline(machine)
    names = levels(machine)
    if want not in names:
        raise OpkitError(f"{ENV}={want!r}: expected baseline, host or one of {', '.join(names)}")
    if names.index(want) > names.index(host):
        raise OpkitError(f"{ENV}={want}: this host is {host}; modules built for {want} would stop on an illegal "
                         f"instruction here")
    return want


def flags(lvl: str, machine: str | None = None) -> list[str]:
    """Compiler flags of a level: none for the baseline (the compiler's default, what opkit built before)."""
    return [] if lvl == baseline(machine) else [f"-march={lvl}"]


def main() -> int:
    try:
        lvl = level()
    except OpkitError as e:
        print(str(e), file=sys.stderr)
        return 1
    print(";".join([lvl, *flags(lvl)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
