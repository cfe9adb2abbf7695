"""opkit's AscendC CPU emulator: C++ headers that compile AscendC kernel source with g++.

`include_dir()` is where `kernel_operator.h` and `tikicpulib.h` live; `cflags()` is what
`opkit cflags` prints for standalone CANN-style CPU-debug programs (docs/emulator.md).
"""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent

PROFILES = ("ascend910b", "ascend310p")
DEFAULT_PROFILE = "ascend910b"


def include_dir() -> Path:
    """Directory holding kernel_operator.h, tikicpulib.h and opkit_emu/*.h."""
    return _HERE / "include"


def host_include_dir() -> Path:
    """Directory holding the shared host headers (opkit/platform.h, opkit/tiling.h, opkit/launch_abi.h)."""
    return _HERE.parent / "include"


def defines(profile: str = DEFAULT_PROFILE) -> list[str]:
    """Preprocessor flags of CANN's CPU mode for a chip profile."""
    if profile not in PROFILES:
        raise ValueError(f"unknown chip profile {profile!r}; expected one of {', '.join(PROFILES)}")
    flags = ["-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1"]
    if profile == "ascend310p":
        flags += ["-DOPKIT_CHIP_ASCEND310P", "-D__NPU_ARCH__=2002"]
    else:
        flags += ["-D__NPU_ARCH__=2201"]
    return flags


def cflags(libs: bool = False, profile: str = DEFAULT_PROFILE) -> list[str]:
    """Compiler flags (libs=False) or link flags (libs=True) for a standalone emulator program."""
    if libs:
        return ["-lpthread"]
    # -ffp-contract=off: no fused multiply-add the device would not do (GCC contracts by default where the ISA
    # has FMA, e.g. aarch64); the same flag CMake puts on every opkit module (cmake/opkit_emulator.cmake)
    return ["-std=c++17", "-ffp-contract=off", f"-I{include_dir()}", f"-I{host_include_dir()}", *defines(profile)]
