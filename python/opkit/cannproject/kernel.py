"""The project's kernel as emulator modules (the launch ABI of python/opkit/include/opkit/launch_abi.h).

One module per dtype column of the OpDef (msOpGen: the kernel is compiled with DTYPE_<NAME> / ORIG_DTYPE_<NAME>
per input and output, as CANN's op build does) or per template instance (ops-math layout: the tiling key
decodes into the entry's template arguments, docs/cann.md). The translation unit (kernel_source) includes
kernel_operator.h, the op_host tiling header (msOpGen: it stands for the header CANN generates for the kernel),
then the kernel file unchanged with its entry renamed, with -DOPKIT_CANN_OP_TYPE=<OpType> so GET_TILING_DATA
reads the op's registered struct.
"""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from .. import emulator
from ..errors import OpkitError


ENTRY_PREFIX = "opkit_cann_entry_"
# C library headers whose global names a kernel entry may share (asinh, div, fmax, ...): included before the
# entry is renamed, so that a later #include of them by the kernel is an include-guarded no-op.
_C_HEADERS = ("cmath", "cstdlib", "cstring", "cstdio", "math.h", "stdlib.h", "string.h", "stdio.h")


def kernel_source(kernel: Path, entry: str, tiling_header: Path | None) -> str:
    """The kernel's translation unit: kernel_operator.h, the op_host tiling header (msOpGen: it stands for the
    header CANN generates), then the kernel file unchanged.

    On the device a kernel entry may be named like a C library function (`extern "C" __global__ __aicore__ void
    asinh(...)`, also div, fmax, ...): the device headers declare no C library. On the CPU, the emulator's
    headers (and CANN's own CPU-debug headers, which include <random> and <cstdlib>) declare ::asinh(double) at
    global scope, and g++ rejects a second C function of that name. The build therefore renames the entry
    token for the kernel file (#define asinh opkit_cann_entry_asinh): the kernel compiles unchanged and the
    launcher calls the renamed symbol. Every entry is renamed, clash or not, so the rule has no exceptions."""
    inc = f'#include "{tiling_header}"\n' if tiling_header else ""
    c_headers = "".join(f"#include <{h}>\n" for h in _C_HEADERS)
    return (f'#include "kernel_operator.h"\n{c_headers}{inc}'
            f"#define {entry} {ENTRY_PREFIX}{entry}\n#include \"{kernel}\"\n#undef {entry}\n")


def module_source(kernel: Path, entry: str, tiling_header: Path | None, num_gm_args: int) -> str:
    """kernel_source plus the module definition; `entry` may carry template arguments (`scale_shift<1, 0>`)."""
    name, _, args = entry.partition("<")
    return (kernel_source(kernel, name, tiling_header) +
            f"namespace {{ auto* const opkit_cann_entry = &{ENTRY_PREFIX}{name}{'<' + args if args else ''}; }}\n"
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
