"""Builds the emulator conformance modules (tests/emulator/test_<feature>.cpp) once per session.

Each test_<feature>.cpp is a pybind11 module holding AscendC kernels; test_<feature>.py imports it via
the `emu` fixture: `mod = emu("vector")`. Builds run in parallel at first use and are cached under
build/test-cache/emulator (key: source + emulator headers + flags), so a re-run compiles nothing.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pybind11
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "python"))

from opkit import emulator  # noqa: E402
from opkit.toolchain import isa  # noqa: E402

CACHE = Path(os.environ.get("OPKIT_TEST_BUILD_DIR", ROOT / "build" / "test-cache" / "emulator"))
PYBIND_MODULES = ("types", "vector", "datacopy", "rules", "pipe", "hazards", "poison", "level0", "compat", "logic",
                  "cann_api", "adv_softmax", "reduce_repeats", "vec_index", "vec_copy",
                  "auto_sync", "system", "gm_init", "shape_info", "transpose", "sort", "level0_mixed",
                  "fast_loops", "adv_math", "broadcast", "reduce_spr", "datacopy_raw", "sum")
# Every ISA level this host can run, not only its own (the bitwise probes): an AVX-512 host then also proves the
# x86-64-v3 build an AVX2 CI host compiles by default, and x86-64-v2's SSE4.1 blends.
HOST_LEVELS = isa.levels()[:isa.levels().index(isa.host_level()) + 1]


def cpu_flags() -> set[str]:
    """The CPU feature flags /proc/cpuinfo lists (the kernel drops a feature whose register state it does not
    enable); empty where there is no /proc/cpuinfo."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return set()
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def glibc_x86_64() -> bool:
    """Exp's vector loops copy x86-64 glibc's expf (opkit_emu/host_expf.h); elsewhere Exp calls expf per element."""
    return platform.machine() == "x86_64" and platform.libc_ver()[0] == "glibc"


def expected_exp_lanes() -> int:
    """The lanes of the Exp loop opkit_emu::host_expf::vector_lanes() must pick on this host: 16 (loop_512) with
    AVX-512F, 8 (loop_fma) with AVX2 + FMA only, 0 (expf per element) otherwise or off x86-64 glibc."""
    if not glibc_x86_64():
        return 0
    flags = cpu_flags()
    if "avx512f" in flags:
        return 16
    return 8 if {"avx2", "fma"} <= flags else 0


# Read once, here: sysconfig's lazy initialisation is not thread-safe (builds run in threads).
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
PY_INCLUDE = sysconfig.get_paths()["include"]


def headers_digest() -> str:
    h = hashlib.sha256()
    # the tests' own headers too (plain_tree.h, float_bits.h): an edit to one rebuilds the modules that include it
    for d in (emulator.include_dir(), emulator.host_include_dir(), HERE):
        for p in sorted(d.glob("*.h") if d == HERE else d.rglob("*.h")):
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def base_flags(profile: str = "ascend910b") -> list[str]:
    return ["g++", "-O1", "-g0", "-fPIC", "-Wall", *emulator.cflags(profile=profile)]


def compile_pybind(name: str, digest: str) -> Path:
    src = HERE / f"test_{name}.cpp"
    flags = base_flags() + ["-shared", "-fvisibility=hidden", f"-I{pybind11.get_include()}",
                            f"-I{PY_INCLUDE}"]
    key = hashlib.sha256((digest + src.read_text() + " ".join(flags)).encode()).hexdigest()[:16]
    out = CACHE / f"emu_test_{name}_{key}{EXT_SUFFIX}"
    if out.exists():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    cmd = flags + [f"-DOPKIT_TEST_MODULE=emu_test_{name}", str(src), "-o", str(tmp)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building {src.name} failed:\n{' '.join(cmd)}\n{r.stderr[-6000:]}")
    tmp.rename(out)
    return out


def build_probe(name: str, level: str, folder: Path) -> Path:
    """A bitwise probe program (tests/emulator/<name>.cpp: the emulator's element loops outside a kernel module)
    compiled at -O2 for ISA ``level`` into ``folder``; returns the executable."""
    exe = folder / name
    cmd = base_flags() + ["-O2", *isa.flags(level), str(HERE / f"{name}.cpp"), "-o", str(exe), "-lpthread"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return exe


def build_host_program(src: str, folder: Path) -> Path:
    """A host-side program (CANN's tiling functions from opkit's host stand-in headers, no emulator) compiled
    into ``folder``; returns the executable. The paired tests of the advanced APIs check the host's tiling with it."""
    opkit_dir = HERE.parents[1] / "python" / "opkit"
    (folder / "host.cpp").write_text(src)
    cmd = ["g++", "-std=c++17", "-O0", f"-I{opkit_dir / 'cannproject' / 'include'}", f"-I{opkit_dir / 'include'}",
           str(folder / "host.cpp"), "-o", str(folder / "host")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building the host program failed:\n{' '.join(cmd)}\n{r.stderr[-6000:]}")
    return folder / "host"


def run_asc(*args: str, defines: tuple[str, ...] | list[str] = (), cwd: Path | None = None):
    """`opkit run-asc ARGS...` with each of ``defines`` as `-D NAME[=VALUE]`, in ``cwd``; the CompletedProcess."""
    cmd = [sys.executable, "-m", "opkit", "run-asc", *map(str, args), *(x for d in defines for x in ("-D", d))]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"emu_test_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def emu_modules():
    digest = headers_digest()
    with ThreadPoolExecutor(max_workers=2) as ex:
        futures = {n: ex.submit(compile_pybind, n, digest) for n in PYBIND_MODULES if (HERE / f"test_{n}.cpp").exists()}
        paths = {n: f.result() for n, f in futures.items()}
    return {n: load(p, n) for n, p in paths.items()}


@pytest.fixture(scope="session")
def emu(emu_modules):
    def get(name: str):
        return emu_modules[name]
    return get


@pytest.fixture(scope="session")
def gxx():
    """Compile a C++ file with the emulator flags; returns CompletedProcess (never raises)."""
    def run(src: Path, out: Path, extra: list[str] = (), profile="ascend910b", link: bool = True):
        cmd = base_flags(profile) + list(extra) + [str(src)]
        if "-fsyntax-only" not in extra:
            cmd += ["-o", str(out)]
        if link:
            cmd += emulator.cflags(libs=True)
        return subprocess.run(cmd, capture_output=True, text=True)
    return run
