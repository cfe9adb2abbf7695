"""--check-only: compile (and link) the generated torch_npu binding on a machine without CANN.

The binding TU is compiled for real against torch's headers and the published torch-npu wheel's
headers, with the flags torch_npu extensions need (-DCURRENT_VERSION=V2R13, -D_GLIBCXX_USE_CXX11_ABI=1,
op-plugin include set: docs/facts/torch-npu-facts.md §1a, §2). Only the kernel launchers are stand-ins: CANN
generates `aclrtlaunch_<kernel>.h` from the kernel, so check mode writes a declaration of the same
shape and, for the link, a definition; the link uses -Wl,--no-undefined so every other symbol must
resolve in libtorch / libtorch_npu. The result, libopkit_npu_check.so, is never loaded (it needs
CANN's libraries anyway).
"""
from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ...errors import BuildError
from . import wheel


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    torch_dir: Path
    torch_npu_dir: Path
    cxx11_abi: int

    def includes(self) -> list[Path]:
        inc = self.torch_dir / "include"
        return [inc, inc / "torch" / "csrc" / "api" / "include", *wheel.include_dirs(self.torch_npu_dir)]

    def libs(self) -> list[str]:
        return [f"-L{self.torch_dir / 'lib'}", f"-L{self.torch_npu_dir / 'lib'}",
                "-ltorch_npu", "-ltorch", "-ltorch_cpu", "-lc10"]


def torch_dir() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("torch is not installed in this Python; opkit needs torch==2.13.*")
    return Path(list(spec.submodule_search_locations)[0])


def cxx() -> str:
    return os.environ.get("CXX", "g++")


def toolchain(log=None) -> Toolchain:
    import torch   # the ABI flag of the installed torch (2.13 wheels: cxx11 ABI)
    return Toolchain(cxx(), torch_dir(), wheel.torch_npu_root(log),
                     int(torch.compiled_with_cxx11_abi()))


def compile_flags(tc: Toolchain, *, version_macro: str, defines: list[str], extra_includes: list[Path]) -> list[str]:
    return (["-std=c++17", "-O0", "-fPIC", "-Wno-c++20-extensions",
             f"-D_GLIBCXX_USE_CXX11_ABI={tc.cxx11_abi}", f"-DCURRENT_VERSION={version_macro}"]
            + [f"-D{d}" for d in defines]
            + [f"-I{p}" for p in (*extra_includes, *tc.includes())])


def _start(cmd: list[str], logfile: Path) -> tuple[subprocess.Popen, list[str], Path]:
    with open(logfile, "w") as f:
        f.write("$ " + shlex.join(cmd) + "\n")
        f.flush()
        return subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, text=True), cmd, logfile


def _finish(job, what: str) -> None:
    proc, cmd, logfile = job
    rc = proc.wait()
    if rc != 0:
        out = logfile.read_text(errors="replace")
        errors = [l for l in out.splitlines() if "error" in l.lower()]
        head = "\n".join(errors[:20]) if errors else out[-4000:]
        raise BuildError(f"opkit build --target npu --check-only: {what} failed (exit {rc}).\n{head}\n"
                         f"full log: {logfile}")


def compile_binding(check_dir: Path, binding: Path, tc: Toolchain, *, version_macro: str, defines: list[str],
                    host_include: Path, extra_jobs: list[tuple[list[str], str]] = (), jobs: int | None = None) -> Path:
    """Compile binding.cpp with the stand-in launchers, link libopkit_npu_check.so; return its path.

    `extra_jobs` (command, what) are small TUs (stand-in definitions, kernel and package-adapter checks);
    they run, `jobs` at a time, while the binding TU compiles."""
    standin_inc = check_dir / "standin"
    obj, defs_obj = check_dir / "binding.o", check_dir / "standin_defs.o"
    lib = check_dir / "libopkit_npu_check.so"
    for p in (obj, defs_obj, lib):
        p.unlink(missing_ok=True)
    logs = check_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    flags = compile_flags(tc, version_macro=version_macro, defines=defines, extra_includes=[standin_inc, host_include])
    big = _start([tc.cxx, *flags, "-c", str(binding), "-o", str(obj)], logs / "binding.log")
    small = [([tc.cxx, "-O0", "-fPIC", "-c", str(check_dir / "standin_defs.cpp"), "-o", str(defs_obj)],
              "compiling the stand-in launchers"), *extra_jobs]
    failures: list[BuildError] = []
    try:
        with ThreadPoolExecutor(max(1, (jobs or os.cpu_count() or 2) - 1)) as pool:
            def run(k: int, cmd: list[str], what: str) -> None:
                try:
                    _finish(_start(cmd, logs / f"check_{k}.log"), what)
                except BuildError as e:
                    failures.append(e)
            for k, (cmd, what) in enumerate(small):
                pool.submit(run, k, cmd, what)
        _finish(big, f"compiling the torch_npu binding {binding}")
    finally:
        if big[0].poll() is None:
            big[0].kill()
    if failures:
        raise BuildError("\n\n".join(str(e) for e in failures))
    link = _start([tc.cxx, "-shared", str(obj), str(defs_obj), "-o", str(lib), "-Wl,--no-undefined", *tc.libs()],
                  logs / "link.log")
    _finish(link, f"linking {lib.name} against libtorch_npu.so (-Wl,--no-undefined)")
    return lib
