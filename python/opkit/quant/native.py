"""Small C kernels of the quant tools, compiled once per host into opkit's cache and loaded with ctypes.

Each caller checks its kernel against the torch ops it replaces before using it; this module only builds and loads.
Several processes may build the same kernel at once (pytest-xdist workers, Ray workers on a fresh cache): the source
goes to the compiler on stdin and the library is written under a per-process name and renamed into place, so no
process ever reads a half-written file.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess

from ..toolchain.cache import cache_root

# -march=native: the binary is this CPU's (the cache key holds the CPU model and flags); no contraction, no fast-math
FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-shared"]


def compiler() -> str | None:
    return next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)


def cpu_id() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features", "CPU part"))]
        return "".join(sorted(set(lines)))
    except OSError:
        import platform
        return platform.processor()


class BuildError(Exception):
    """Why a kernel could not be built or loaded (the caller falls back to the torch ops and says this)."""


def load(source: str, subdir: str, stem: str, symbols: tuple[str, ...]) -> ctypes.CDLL:
    """The library compiled from ``source`` (cached under ``subdir``), with every name in ``symbols`` present."""
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler (cc, gcc, clang) on PATH")
    key = hashlib.sha256(f"{source} {FLAGS} {cc} {os.uname().machine} {cpu_id()}".encode()).hexdigest()[:16]
    d = cache_root() / subdir
    so = d / f"{stem}-{key}.so"
    if not so.exists():
        d.mkdir(parents=True, exist_ok=True)
        tmp = so.with_suffix(f".{os.getpid()}.tmp")
        r = subprocess.run([cc, *FLAGS, "-x", "c", "-", "-o", str(tmp)], input=source, capture_output=True,
                           text=True)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise BuildError(f"{cc} failed: {r.stderr.strip()[-300:]}")
        os.replace(tmp, so)
    try:
        lib = ctypes.CDLL(str(so))
        for name in symbols:
            getattr(lib, name)
    except (OSError, AttributeError) as e:
        so.unlink(missing_ok=True)          # a broken file must not stop every later run: the next one rebuilds
        raise BuildError(f"loading {so} failed: {e}") from e
    return lib


def checked(state: dict, load, self_check):
    """``state["lib"]``: what ``load()`` gives once ``self_check`` (None: equal to the torch ops) passes, else None
    with ``state["why"]`` saying why; worked out on the first call (the caller holds its lock)."""
    if "lib" not in state:
        lib = None
        try:
            lib = load()
        except BuildError as e:
            state["why"] = str(e)
        if lib is not None:
            bad = self_check(lib)
            if bad is not None:
                state["why"] = f"self-check: {bad}"
                lib = None
        state["lib"] = lib
    return state["lib"]
