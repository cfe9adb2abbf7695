"""Target ``cpu``, the build: the AscendC CPU emulator.

Renders, per op, ``module.cpp`` (kernel module) and ``binding.cpp`` (torch binding) from templates/
into ``<build>/_gen/``, one CMakeLists for all ops of the build folder (cmake/opkit_cpu.cmake does the
work), and drives CMake + Ninja. Outputs: ``<build>/<op>/kernel_<tag>[_naive].so`` and
``libopkit_<op>.so`` (docs/architecture.md "Emulator target").
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
from pathlib import Path

import jinja2

from ...errors import BuildError, SpecError
from ...lowering import cpp_str, lower
from ...opspec import DTYPES, OpSpec, dtype_names, load_spec
from ...toolchain.files import write_if_changed
from ...toolchain.stamps import write_stamp
from ...toolchain.tools import Log, cmake_exe, compile_failure_message, default_jobs, ninja_exe, run_tool
from ...workspace import emulator_include_dir, host_include_dir

HERE = Path(__file__).resolve().parent

TARGET = "cpu"
REGISTRY = "ops.json"    # every op this build folder has built, so a partial build keeps the others



def available() -> tuple[bool, str]:
    if not (emulator_include_dir() / "kernel_operator.h").is_file():
        return False, f"the emulator headers are missing ({emulator_include_dir() / 'kernel_operator.h'})"
    cxx = shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return False, "no C++ compiler (c++ or g++) on PATH"
    return True, f"AscendC CPU emulator with {cxx}"


def library(build_dir: Path, spec: OpSpec) -> Path:
    return Path(build_dir) / spec.snake / f"libopkit_{spec.snake}.so"


def kernel_module(build_dir: Path, spec: OpSpec, dtype: str, naive: bool = False) -> Path:
    return Path(build_dir) / spec.snake / f"kernel_{DTYPES[dtype][2]}{'_naive' if naive else ''}.so"


def emulator_cflags() -> list[str]:
    """opkit.emulator.cflags() (include dirs, defines), as a list."""
    try:
        from ... import emulator
        flags = emulator.cflags()
    except (ImportError, AttributeError):
        flags = [f"-I{emulator_include_dir()}", f"-I{host_include_dir()}"]
    return shlex.split(flags) if isinstance(flags, str) else list(flags)


# -- build ---------------------------------------------------------------------------------------

def build(specs: list[OpSpec], build_dir: Path, *, jobs: int | None = None, log: Log = lambda s: None,
          verbose: bool = False, keep_going: bool = False, dtype=None, **options) -> None:
    """Build the AscendC ops ``specs`` into ``build_dir`` (opkit/build.py routes other languages). keep_going: build every op even if one fails; the BuildError
    then carries ``failed_ops`` (snake -> message) and the ops that built are stamped as built.
    dtype: only these lead dtypes' kernel modules (the edit loop, `opkit build --dtype`); the op's other
    modules that this build made out of date are deleted, so a stale module is never loaded."""
    if options:
        raise BuildError(f"target cpu takes no options ({', '.join(sorted(options))})")
    dtypes = _dtypes(specs, dtype)
    ok, why = available()
    if not ok:
        raise BuildError(f"cannot build for target 'cpu' on this machine: {why}")
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # one build per folder at a time (CLI, opkit.load, tests)
        _build_locked(specs, build_dir, jobs=jobs, log=log, verbose=verbose, keep_going=keep_going, dtypes=dtypes)


def _dtypes(specs: list[OpSpec], dtype) -> list[str] | None:
    """`--dtype` values (float16 / fp16 / half ...) as dtype names; None: every dtype."""
    if not dtype:
        return None
    names = dtype_names(dtype)
    for s in specs:
        if not set(names) & set(s.dtypes):
            raise BuildError(f"--dtype {', '.join(names)}: op {s.snake} has no such dtype ({s.dir / 'op.yaml'}: "
                             f"inputs[0].dtypes is {', '.join(s.dtypes)})")
    return names


def _ninja_targets(specs: list[OpSpec], dtypes: list[str] | None) -> list[str]:
    if dtypes is None:
        return [f"opkit_{s.snake}" for s in specs]
    out = []
    for s in specs:
        out.append(f"{s.snake}__binding")
        for dt in s.dtypes:
            if dt in dtypes:
                out += [f"{s.snake}__kernel_{DTYPES[dt][2]}", f"{s.snake}__kernel_{DTYPES[dt][2]}_naive"]
    return out


_LINK = re.compile(r"Linking CXX shared module (\S+\.so)")


def _drop_stale_modules(cmk: Path, specs: list[OpSpec], dtypes: list[str], log: Log) -> None:
    """After a --dtype build: delete the modules of the other dtypes that Ninja would rebuild (their
    sources changed), so nothing loads a kernel built from old sources; a full build makes them again."""
    others = [f"{s.snake}__kernel_{DTYPES[dt][2]}{v}" for s in specs for dt in s.dtypes if dt not in dtypes
              for v in ("", "_naive")]
    if not others:
        return
    rc, out = run_tool([ninja_exe(), "-C", str(cmk), "-n"] + others)
    for m in _LINK.finditer(out):
        path = Path(m.group(1))
        if path.is_file():
            path.unlink()
            log(f"removed the out-of-date {path.name} (a full `opkit build` makes it again)")


def _build_locked(specs: list[OpSpec], build_dir: Path, *, jobs, log, verbose, keep_going, dtypes=None) -> None:
    gen, cmk = build_dir / "_gen", build_dir / "_cmake"
    all_specs = _with_registry(build_dir, specs)
    env = _env()
    changed = []
    for spec in all_specs:
        plan = binding_plan(spec)
        changed.append(write_if_changed(gen / spec.snake / "module.cpp", env.get_template("module.cpp.j2").render(plan)))
        changed.append(write_if_changed(gen / spec.snake / "binding.cpp", env.get_template("binding.cpp.j2").render(plan)))
        changed.append(write_if_changed(gen / spec.snake / "tiling.cpp", env.get_template("tiling.cpp.j2").render(plan)))
    pch = len(all_specs) >= 3
    write_if_changed(gen / "pch.h", env.get_template("pch.h.j2").render())
    write_if_changed(gen / "pch_stub.cpp", "// empty: carries the precompiled torch headers\n")
    write_if_changed(gen / "CMakeLists.txt", env.get_template("CMakeLists.txt.j2").render(
        _cmake_context(all_specs, build_dir, gen, pch)))

    if not (cmk / "build.ninja").is_file():
        log(f"configuring {cmk}")
        rc, out = run_tool([cmake_exe(), "-S", str(gen), "-B", str(cmk), "-G", "Ninja",
                            f"-DCMAKE_MAKE_PROGRAM={ninja_exe()}", "-DCMAKE_BUILD_TYPE=Release"],
                           verbose=verbose, log=log)
        if rc != 0:
            raise BuildError(f"CMake configure failed in {cmk}:\n{out[-6000:]}")

    jobs = jobs or default_jobs()
    targets = _ninja_targets(specs, dtypes)
    cmd = [ninja_exe(), "-C", str(cmk), f"-j{jobs}"] + (["-v"] if verbose else []) + \
        (["-k", "0"] if keep_going else []) + targets
    names = ", ".join(s.snake for s in specs)
    log(f"building {names} (cpu, -j{jobs}{', ' + '/'.join(dtypes) + ' only' if dtypes else ''})")
    last = [0]

    def progress(done: int, total: int, what: str) -> None:
        if done != last[0]:
            last[0] = done
            log(f"[{done}/{total}] {_short(what, build_dir)}")

    rc, out = run_tool(cmd, verbose=verbose, log=log, progress=progress)
    if rc != 0:
        failed = {}
        for s in specs:
            if not keep_going or not _up_to_date(cmk, s):
                failed[s.snake] = compile_failure_message(
                    out, [p for p in s.dir.iterdir() if p.is_file()], f"opkit build {s.snake} (target cpu)")
        for s in specs:
            if s.snake not in failed:
                write_stamp(s, build_dir / s.snake, TARGET, dtypes=dtypes)
        _save_registry(build_dir, all_specs)
        users = [p for s in all_specs for p in s.dir.iterdir() if p.is_file()]
        err = BuildError(compile_failure_message(out, users, f"opkit build ({names}, target cpu)"))
        err.failed_ops = failed
        raise err
    if dtypes is not None:
        _drop_stale_modules(cmk, specs, dtypes, log)
    for s in specs:
        write_stamp(s, build_dir / s.snake, TARGET, dtypes=dtypes)
    _save_registry(build_dir, all_specs)
    if "no work to do" in out:
        log("up to date")


def _up_to_date(cmk: Path, spec: OpSpec) -> bool:
    rc, out = run_tool([ninja_exe(), "-C", str(cmk), "-n", f"opkit_{spec.snake}"])
    return rc == 0 and "no work to do" in out


def _short(what: str, build_dir: Path) -> str:
    return what.replace(str(build_dir) + "/", "")


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def _with_registry(build_dir: Path, specs: list[OpSpec]) -> list[OpSpec]:
    """Requested specs plus the ops built here before (still present and valid), by snake name."""
    by_name = {}
    reg = build_dir / REGISTRY
    if reg.is_file():
        try:
            for snake, d in json.loads(reg.read_text()).items():
                if (Path(d) / "op.yaml").is_file():
                    try:
                        by_name[snake] = load_spec(d)
                    except SpecError:
                        pass   # an op that no longer loads drops out until it is built again
        except (OSError, ValueError):
            pass
    for s in specs:
        by_name[s.snake] = s
    return [by_name[k] for k in sorted(by_name) if by_name[k].lang not in ("tbe", "cann")]


def _save_registry(build_dir: Path, specs: list[OpSpec]) -> None:
    write_if_changed(build_dir / REGISTRY, json.dumps({s.snake: str(s.dir) for s in specs}, indent=1) + "\n")


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cmake_context(specs: list[OpSpec], build_dir: Path, gen: Path, pch: bool) -> dict:
    includes, libdir, abi = torch_paths()
    ops = []
    for s in specs:
        kernels = []
        for dt in s.dtypes:
            defines = kernel_defines(s, dt)
            tag = DTYPES[dt][2]
            kernels.append({"name": f"kernel_{tag}", "defines": defines, "naive": False})
            kernels.append({"name": f"kernel_{tag}_naive", "naive": True,
                            "defines": defines + ["OPKIT_NAIVE_COMPUTE", "OPKIT_EMU_ALLOW_BF16_MATH"]})
        ops.append({"name": s.name, "snake": s.snake, "dir": str(s.dir), "op_yaml": str(s.dir / "op.yaml"),
                    "kernels": kernels, "module_cpp": str(gen / s.snake / "module.cpp"),
                    "binding_cpp": str(gen / s.snake / "binding.cpp"), "tiling_cpp": str(gen / s.snake / "tiling.cpp")})
    return {
        "output_dir": str(build_dir), "cmake_dir": str(HERE / "cmake"), "host_include": str(host_include_dir()),
        "emu_cflags": " ".join(_q(f) for f in emulator_cflags()),
        "torch_includes": " ".join(_q(p) for p in includes),
        "torch_libdir": libdir,
        "torch_defines": _q(f"_GLIBCXX_USE_CXX11_ABI={abi}"), "pch": pch, "ops": ops,
        "ccache": "" if os.environ.get("OPKIT_NO_CCACHE") else (shutil.which("ccache") or ""),
    }


def torch_paths() -> tuple[list[str], str, int]:
    """(include dirs, library dir, _GLIBCXX_USE_CXX11_ABI) of the installed torch, found without importing
    torch when possible (an import costs seconds; a no-op `opkit build` should not)."""
    import importlib.util

    from ...toolchain.stamps import torch_version
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        raise BuildError("PyTorch is not installed in this Python environment")
    root = Path(spec.origin).parent
    includes = [str(root / "include"), str(root / "include" / "torch" / "csrc" / "api" / "include")]
    major_minor = tuple(int(x) for x in torch_version().split("+")[0].split(".")[:2])
    if major_minor >= (2, 7):
        abi = 1          # pip wheels of torch >= 2.7 are built with the C++11 ABI only
    else:
        import torch
        abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    return includes, str(root / "lib"), abi


def kernel_defines(spec: OpSpec, lead_dtype: str) -> list[str]:
    """-D values of one kernel variant: DTYPE_<NAME>=<C++ type> for every input and output."""
    return next(list(v.defines) for v in lower(spec).variants if v.dtype.name == lead_dtype)


# -- the templates' context ------------------------------------------------------------------------

def binding_plan(spec: OpSpec) -> dict:
    """What templates/module.cpp.j2 and binding.cpp.j2 render from: the op's lowering (opkit/lowering.py)
    plus this build's file paths. The C++ itself is spelled in the templates."""
    return {"op": lower(spec), "op_yaml": str(spec.dir / "op.yaml"), "tiling_h": str(spec.tiling_file),
            "kernel_cpp": str(spec.kernel_file), "num_gm_args": len(spec.inputs) + len(spec.outputs) + 2,
            "cpp_str": cpp_str}
