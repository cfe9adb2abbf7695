"""Compile a kernel into an emulator module (the launch ABI), the way opkit's build does:
a generated TU includes kernel_operator.h, the kernel by absolute path, then OPKIT_EMU_DEFINE_MODULE.
``runtime=True`` also does what the build does with the emulator's non-template runtime: compiled once (cached
by compiler, flags and the headers' content) and linked in, the module compiled with declarations only
(opkit_emu/config.h, OPKIT_EMU_RT); the default compiles the headers header-only."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from opkit.emulator import host_include_dir, include_dir


def module_source(kernel: Path, entry: str, num_gm_args: int) -> str:
    return (f'#include "kernel_operator.h"\n#include "{Path(kernel).resolve()}"\n'
            f"OPKIT_EMU_DEFINE_MODULE({entry}, {num_gm_args})\n")


RUNTIME_SOURCE = Path(__file__).resolve().parents[1] / "csrc" / "op" / "emulator_runtime.cpp"


def _headers_digest(*extra: Path) -> "hashlib._Hash":
    digest = hashlib.sha256()
    for p in [*extra, *sorted(include_dir().rglob("*.h")), *sorted(host_include_dir().rglob("*.h"))]:
        digest.update(p.read_bytes())
    return digest


def _gxx(cmd: list[str], what: Path) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compiling {what} failed:\n{' '.join(cmd)}\n{r.stderr[-6000:]}")


def runtime_object(flags: list[str], opt: str, out_dir: Path) -> Path:
    """The emulator runtime (every OPKIT_EMU_RT function) compiled once for these flags: <out_dir>/emulator_runtime_<hash>.o."""
    version = subprocess.run(["g++", "--version"], capture_output=True, text=True, check=True).stdout
    digest = _headers_digest(RUNTIME_SOURCE)
    digest.update((version + " ".join(flags) + opt).encode())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"emulator_runtime_{digest.hexdigest()[:16]}.o"
    if not out.exists():
        _gxx(["g++", "-std=c++17", opt, "-fPIC", "-fvisibility=hidden", "-c", f"-I{include_dir()}",
              f"-I{host_include_dir()}", *flags, "-DOPKIT_EMU_RUNTIME_IMPL", str(RUNTIME_SOURCE), "-o",
              str(out) + ".tmp"], RUNTIME_SOURCE)
        Path(str(out) + ".tmp").rename(out)
    return out


def compile_module(kernel: Path, entry: str, num_gm_args: int, out_dir: Path, *, defines: dict[str, str] | None = None,
                   profile: str = "ascend910b", opt: str = "-O2", runtime: bool = False) -> Path:
    """Builds (or reuses) <out_dir>/<entry>_<hash>.so; raises RuntimeError with g++'s output on failure.
    ``runtime``: link the runtime object (runtime_object) instead of compiling the runtime into the module."""
    flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    if profile == "ascend310p":
        flags.append("-DOPKIT_CHIP_ASCEND310P")
    src = module_source(kernel, entry, num_gm_args)
    link = [str(runtime_object(flags, opt, out_dir)), "-DOPKIT_EMU_RUNTIME_EXTERN"] if runtime else []
    digest = _headers_digest(Path(kernel))
    digest.update((src + " ".join(flags) + opt + " ".join(link)).encode())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{entry}_{digest.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tu = out.with_suffix(".cpp")
    tu.write_text(src)
    _gxx(["g++", "-std=c++17", opt, "-fPIC", "-shared", "-fvisibility=hidden", f"-I{include_dir()}",
          f"-I{host_include_dir()}", f"-I{Path(kernel).resolve().parent}", *flags, str(tu), *link, "-o",
          str(out) + ".tmp"], Path(kernel))
    Path(str(out) + ".tmp").rename(out)
    return out
