"""Target ``cpu``, the build: the AscendC CPU emulator.

Drives the CMake project cmake/workspace/CMakeLists.txt -- the same cmake/ modules as the repository's own
CMakeLists.txt (one ``opkit_add_op()`` per op folder) -- with CMake + Ninja: nothing is rendered per op.
Outputs: ``<build>/<op>/kernel_<tag>[_naive].so`` and ``<build>/<op>/build.json``; the torch side of every op
is one library built once per torch version (opkit.registration). docs/architecture.md "Emulator target".
"""
from __future__ import annotations

import fcntl
import json
import re
import shlex
import shutil
from pathlib import Path

from ...errors import BuildError, SpecError
from ...lowering import lower
from ...opspec import DTYPES, OpSpec, dtype_names, load_spec
from ...toolchain.cmake_project import configure
from ...toolchain.files import write_if_changed
from ...toolchain.stamps import STAMP, write_stamp
from ...toolchain.tools import Log, compile_failure_message, default_jobs, ninja_exe, run_tool
from ...workspace import emulator_include_dir, host_include_dir

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
    return Path(build_dir) / spec.snake / STAMP     # the op's build manifest: its modules sit next to it


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
          verbose: bool = False, keep_going: bool = False, dtype=None, no_auto_sync: bool = False,
          **options) -> None:
    """Build the AscendC ops ``specs`` into ``build_dir`` (opkit/build.py routes other languages). keep_going: build every op even if one fails; the BuildError
    then carries ``failed_ops`` (snake -> message) and the ops that built are stamped as built.
    dtype: only these lead dtypes' kernel modules (the edit loop, `opkit build --dtype`); the op's other
    modules that this build made out of date are deleted, so a stale module is never loaded.
    no_auto_sync: every kernel built as CANN's `--cce-auto-sync=off` would (`opkit build --no-auto-sync`; one op:
    `auto_sync: false` in its op.yaml), so a kernel that relies on the compiler's scalar syncs fails pipe-race."""
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
        _build_locked(specs, build_dir, jobs=jobs, log=log, verbose=verbose, keep_going=keep_going, dtypes=dtypes,
                      auto_sync=not no_auto_sync)


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
        lazy = _naive_on_demand(s)
        for dt in s.dtypes:
            if dt in dtypes:
                out += [f"{s.snake}__kernel_{DTYPES[dt][2]}"] + \
                    ([] if dt in lazy else [f"{s.snake}__kernel_{DTYPES[dt][2]}_naive"])
    return out


def _naive_on_demand(spec: OpSpec) -> set[str]:
    """Lead dtypes whose naive module is built on its first call, not by `opkit build` (lowering.Variant)."""
    return {v.dtype.name for v in lower(spec).variants if v.naive_on_demand}


def build_module(build_dir: Path, spec: OpSpec, file: str, log: Log = lambda s: None) -> Path:
    """Make the on-demand module ``file`` (kernel_<tag>_naive.so of the compute dtype) of ``spec`` current in
    ``build_dir`` -- built on the first call that needs it (opkit.loader hands this to the torch-side library)
    when the op's kernel_<tag>.so in ``build_dir`` is current. Raises BuildError when its sources changed since
    the last `opkit build` (the module would not match that build's; the check is against the folder, not
    the module this process loaded), when Ninja cannot answer, or when the compile fails."""
    build_dir = Path(build_dir).resolve()
    tag = next((DTYPES[d][2] for d in _naive_on_demand(spec) if file == f"kernel_{DTYPES[d][2]}_naive.so"), None)
    if tag is None:
        raise BuildError(f"opkit.{spec.snake}: {file} is not a module built on demand "
                         f"(those are kernel_<compute dtype>_naive.so; {spec.dir / 'op.yaml'})")
    cmk = build_dir / "_cmake"
    if not (cmk / "build.ninja").is_file():
        raise BuildError(f"opkit.{spec.snake}: {build_dir / spec.snake / file} is built on first use, but "
                         f"{build_dir} has no opkit build tree (_cmake/build.ninja); build the CMake target "
                         f"{spec.snake}__kernel_{tag}_naive, or run `opkit build`")
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _module_would_rebuild(cmk, spec, tag):
            raise BuildError(f"opkit.{spec.snake}: {file} is built on first use from the sources of the current "
                             f"build's kernel_{tag}.so, and they changed since the last `opkit build`: run "
                             f"`opkit build {spec.snake}`, then call it again in a new process")
        target = f"{spec.snake}__kernel_{tag}_naive"
        rc, out = run_tool([ninja_exe(), "-C", str(cmk), target], log=log)
        if rc != 0:
            raise BuildError(compile_failure_message(out, [p for p in spec.dir.iterdir() if p.is_file()],
                                                     f"{target} (built on first use, target cpu)"))
    return build_dir / spec.snake / file


_LINK = re.compile(r"Linking CXX shared module (\S+\.so)")


def _module_would_rebuild(cmk: Path, spec: OpSpec, tag: str) -> bool:
    """Whether Ninja would relink ``<op>/kernel_<tag>.so`` -- its sources changed since the last build. A dry
    run stops at `Re-running CMake...` when any configure input (any op's op.yaml, opkit's cmake files) is
    newer than build.ninja, which says nothing about this module: regenerate then (what the next build does
    first; a flag change for this op then shows as its relink) and dry-run again."""
    def run(*args: str) -> str:
        cmd = [ninja_exe(), "-C", str(cmk), *args]
        rc, out = run_tool(cmd)
        if rc != 0:
            raise BuildError(f"opkit.{spec.snake}: kernel_{tag}_naive.so is built on first use, and checking "
                             f"that kernel_{tag}.so is current failed: `{' '.join(cmd)}` exited {rc}:\n"
                             f"{out.strip()}")
        return out

    target = f"{spec.snake}__kernel_{tag}"
    out = run("-n", target)
    if "Re-running CMake" in out:
        run("build.ninja")
        out = run("-n", target)
    return any(Path(m.group(1)).name == f"kernel_{tag}.so" and Path(m.group(1)).parent.name == spec.snake
               for m in _LINK.finditer(out))


def _drop_stale_modules(cmk: Path, specs: list[OpSpec], dtypes: list[str] | None, log: Log) -> None:
    """After a build: delete the modules Ninja would rebuild (their sources changed) that this build did not
    make -- the other dtypes' after a --dtype build (``dtypes``; None: a full build), and any on-demand naive
    module (its next first call builds it again) -- so nothing loads a kernel built from old sources; a full
    build makes the dtypes' again."""
    others = []
    for s in specs:
        lazy = _naive_on_demand(s)      # lowers the spec: once per op, not per module
        others += [f"{s.snake}__kernel_{DTYPES[dt][2]}{v}" for dt in s.dtypes for v in ("", "_naive")
                   if (dtypes is not None and dt not in dtypes) or (v and dt in lazy)]
    if not others:
        return
    rc, out = run_tool([ninja_exe(), "-C", str(cmk), "-n"] + others)
    for m in _LINK.finditer(out):
        path = Path(m.group(1))
        if path.is_file():
            path.unlink()
            log(f"removed the out-of-date {path.name} (a full `opkit build` makes it again)")


def _build_locked(specs: list[OpSpec], build_dir: Path, *, jobs, log, verbose, keep_going, dtypes=None,
                  auto_sync: bool = True) -> None:
    cmk = build_dir / "_cmake"
    all_specs = _with_registry(build_dir, specs)
    configure(cmk, build_dir, [str(s.dir) for s in all_specs], keep_going=keep_going, verbose=verbose, log=log,
              auto_sync=auto_sync)

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
    # a --dtype build: the other dtypes' modules it made stale; every build: an on-demand module it made stale
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


def kernel_defines(spec: OpSpec, lead_dtype: str) -> list[str]:
    """-D values of one kernel variant: DTYPE_<NAME>=<C++ type> for every input and output."""
    return next(list(v.defines) for v in lower(spec).variants if v.dtype.name == lead_dtype)
