"""Compile a kernel into an emulator module (the launch ABI), the way opkit's build does:
a generated TU includes kernel_operator.h, the kernel by absolute path, then OPKIT_EMU_DEFINE_MODULE.
``runtime=True`` also does what the build does with the emulator's non-template runtime: compiled once (cached
by compiler, flags and the headers' content) and linked in, the module compiled with declarations only
(opkit_emu/config.h, OPKIT_EMU_RT); the default compiles the headers header-only."""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import uuid
from pathlib import Path

from opkit.emulator import host_include_dir, include_dir


def module_source(kernel: Path, entry: str, num_gm_args: int) -> str:
    return (f'#include "kernel_operator.h"\n#include "{Path(kernel).resolve()}"\n'
            f"OPKIT_EMU_DEFINE_MODULE({entry}, {num_gm_args})\n")


RUNTIME_SOURCE = Path(__file__).resolve().parents[1] / "csrc" / "op" / "emulator_runtime.cpp"


@functools.cache
def _headers_bytes_digest() -> bytes:
    """The emulator and host headers' content, hashed once per process (cache keys; a header edit in a running
    process is not seen, as a built module is not reloaded either)."""
    digest = hashlib.sha256()
    for p in [*sorted(include_dir().rglob("*.h")), *sorted(host_include_dir().rglob("*.h"))]:
        digest.update(p.read_bytes())
    return digest.digest()


@functools.cache
def _gxx_version() -> str:
    return subprocess.run(["g++", "--version"], capture_output=True, text=True, check=True).stdout


def _headers_digest(*extra: Path) -> "hashlib._Hash":
    digest = hashlib.sha256()
    for p in extra:
        digest.update(p.read_bytes())
    digest.update(_headers_bytes_digest())
    return digest


def _gxx(cmd: list[str], what: Path) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compiling {what} failed:\n{' '.join(cmd)}\n{r.stderr[-6000:]}")


def _private_tmp(out: Path, suffix: str = ".tmp") -> Path:
    """A temp name no other writer of `out` uses (processes and threads), renamed onto `out` when complete: two
    writers of one cached file never see, move or truncate each other's output."""
    return out.with_name(f"{out.name}.{os.getpid()}.{uuid.uuid4().hex}{suffix}")


def _build_into(out: Path, cmd_before_out: list[str], what: Path) -> None:
    tmp = _private_tmp(out)
    try:
        _gxx([*cmd_before_out, "-o", str(tmp)], what)
        os.replace(tmp, out)   # atomic; a concurrent writer's identical file is simply replaced
    finally:
        tmp.unlink(missing_ok=True)


def runtime_object(flags: list[str], opt: str, out_dir: Path) -> Path:
    """The emulator runtime (every OPKIT_EMU_RT function) compiled once for these flags:
    <out_dir>/emulator_runtime_<hash>.o. Keyed by every flag the module is compiled with (a kernel's DTYPE_* too,
    which no emulator header reads: one object per define set here, where the CMake build has one per flavour)."""
    digest = _headers_digest(RUNTIME_SOURCE)
    digest.update((_gxx_version() + " ".join(flags) + opt).encode())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"emulator_runtime_{digest.hexdigest()[:16]}.o"
    if not out.exists():
        _build_into(out, ["g++", "-std=c++17", opt, "-fPIC", "-fvisibility=hidden", "-c", f"-I{include_dir()}",
                          f"-I{host_include_dir()}", *flags, "-DOPKIT_EMU_RUNTIME_IMPL", str(RUNTIME_SOURCE)],
                    RUNTIME_SOURCE)
    return out


def compile_module(kernel: Path, entry: str, num_gm_args: int, out_dir: Path, *, defines: dict[str, str] | None = None,
                   profile: str = "ascend910b", opt: str = "-O2", runtime: bool = False) -> Path:
    """Builds (or reuses) <out_dir>/<entry>_<hash>.so; raises RuntimeError with g++'s output on failure.
    ``runtime``: link the runtime object (runtime_object) instead of compiling the runtime into the module."""
    flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    if profile == "ascend310p":
        flags.append("-DOPKIT_CHIP_ASCEND310P")
    src = module_source(kernel, entry, num_gm_args)
    objects = [str(runtime_object(flags, opt, out_dir))] if runtime else []
    if runtime:
        flags.append("-DOPKIT_EMU_RUNTIME_EXTERN")
    digest = _headers_digest(Path(kernel))
    digest.update((src + " ".join(flags) + opt + " ".join(objects)).encode())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{entry}_{digest.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tu = _private_tmp(out, ".cpp")   # written per writer too: another writer never compiles a half-written TU
    tu.write_text(src)
    try:
        _build_into(out, ["g++", "-std=c++17", opt, "-fPIC", "-shared", "-fvisibility=hidden", f"-I{include_dir()}",
                          f"-I{host_include_dir()}", f"-I{Path(kernel).resolve().parent}", *flags, str(tu),
                          *objects], Path(kernel))
    finally:
        tu.unlink(missing_ok=True)
    return out
