"""The project's kernel as emulator modules (the launch ABI of python/opkit/include/opkit/launch_abi.h).

One module per dtype column of the OpDef (msOpGen: the kernel is compiled with DTYPE_<NAME> / ORIG_DTYPE_<NAME>
per input and output, as CANN's op build does) or per template instance (ops-math layout: the tiling key
decodes into the entry's template arguments, docs/cann.md). The translation unit includes kernel_operator.h,
the op_host tiling header (msOpGen: it stands for the header CANN generates for the kernel), then the kernel
file unchanged, with -DOPKIT_CANN_OP_TYPE=<OpType> so GET_TILING_DATA reads the op's registered struct.
"""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from .. import emulator
from ..errors import OpkitError


def module_source(kernel: Path, entry: str, tiling_header: Path | None, num_gm_args: int) -> str:
    inc = f'#include "{tiling_header}"\n' if tiling_header else ""
    return (f'#include "kernel_operator.h"\n{inc}#include "{kernel}"\n'
            f"namespace {{ auto* const opkit_cann_entry = &{entry}; }}\n"
            f"OPKIT_EMU_DEFINE_MODULE(opkit_cann_entry, {num_gm_args})\n")


def compile_module(kernel: Path, entry: str, num_gm_args: int, out_dir: Path, *, defines: dict[str, str],
                   tiling_header: Path | None, include_dirs: list[Path], profile: str = "ascend910b",
                   tag: str = "") -> Path:
    """Build (or reuse) a module; raises OpkitError with the compiler's first errors."""
    src = module_source(kernel.resolve(), entry, tiling_header.resolve() if tiling_header else None, num_gm_args)
    flags = ["-O2", "-g0", "-w", "-fPIC", "-shared", "-fvisibility=hidden", *emulator.cflags(profile=profile),
             *(f"-I{d}" for d in include_dirs), *(f"-D{k}={v}" for k, v in sorted(defines.items()))]
    h = hashlib.sha256((src + " ".join(flags)).encode())
    for d in (emulator.include_dir(), emulator.host_include_dir(), *include_dirs):
        for p in sorted(Path(d).rglob("*")):
            if p.suffix in (".h", ".hpp", ".cpp", ".cc") and p.is_file():
                h.update(p.read_bytes())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"kernel_{tag or 'module'}_{h.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tu = out.with_suffix(".cpp")
    tu.write_text(src)
    cmd = ["g++", *flags, str(tu), "-o", str(out) + ".tmp", *emulator.cflags(libs=True)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        errors = [ln for ln in r.stderr.splitlines() if "error" in ln][:8]
        raise OpkitError(f"{kernel}: the kernel does not compile on the emulator ({tag}):\n  " +
                         "\n  ".join(errors or r.stderr.splitlines()[-8:]))
    Path(str(out) + ".tmp").rename(out)
    return out
