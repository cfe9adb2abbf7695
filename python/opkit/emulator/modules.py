"""Compile a kernel into an emulator module (the launch ABI), the way opkit's build does:
a generated TU includes kernel_operator.h, the kernel by absolute path, then OPKIT_EMU_DEFINE_MODULE."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from opkit.emulator import host_include_dir, include_dir


def module_source(kernel: Path, entry: str, num_gm_args: int) -> str:
    return (f'#include "kernel_operator.h"\n#include "{Path(kernel).resolve()}"\n'
            f"OPKIT_EMU_DEFINE_MODULE({entry}, {num_gm_args})\n")


def compile_module(kernel: Path, entry: str, num_gm_args: int, out_dir: Path, *, defines: dict[str, str] | None = None,
                   profile: str = "ascend910b", opt: str = "-O2") -> Path:
    """Builds (or reuses) <out_dir>/<entry>_<hash>.so; raises RuntimeError with g++'s output on failure."""
    flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    if profile == "ascend310p":
        flags.append("-DOPKIT_CHIP_ASCEND310P")
    src = module_source(kernel, entry, num_gm_args)
    digest = hashlib.sha256()
    for p in [Path(kernel), *sorted(include_dir().rglob("*.h")), *sorted(host_include_dir().rglob("*.h"))]:
        digest.update(p.read_bytes())
    digest.update((src + " ".join(flags) + opt).encode())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{entry}_{digest.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tu = out.with_suffix(".cpp")
    tu.write_text(src)
    cmd = ["g++", "-std=c++17", opt, "-fPIC", "-shared", "-fvisibility=hidden", f"-I{include_dir()}",
           f"-I{host_include_dir()}", f"-I{Path(kernel).resolve().parent}", *flags, str(tu), "-o", str(out) + ".tmp"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compiling {kernel} failed:\n{' '.join(cmd)}\n{r.stderr[-6000:]}")
    Path(str(out) + ".tmp").rename(out)
    return out
