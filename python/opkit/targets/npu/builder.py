"""Target `npu`, the build: the same kernel.cpp and tiling.h built with CANN for an Ascend NPU, registered for
torch_npu as PrivateUse1 kernels in one library, build/opkit/npu/libopkit_npu.so.

Layout of a build folder:
  src/binding.cpp, src/<prelude>.h      rendered glue (docs/npu.md explains each part); the CMake project is
                                        cmake/workspace with OPKIT_TARGET=npu (cmake/opkit_npu.cmake)
  cmake/                                CMake + Ninja build tree (CANN's ascendc_library)
  cmake/lib/libopkit_kernel_<op>_<tag>.so kernel variants (one per op x dtype; CANN's ascendc_library)
  libopkit_npu.so                       the torch_npu binding opkit.load() loads
  check/                                --check-only: stand-in launchers, logs, libopkit_npu_check.so
  package/                              --package: msopgen-style custom-op project (+ build_out/*.run)

This module is imported by `opkit.load()` on every machine: it imports nothing heavy at import time
and never imports torch_npu unless asked to load the NPU library.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from ... import emulator   # the NPU check compiles kernels against the emulator's headers
from ...errors import BuildError
from ...toolchain.files import write_if_changed
from ...toolchain.tools import cmake_exe
from ...workspace import emulator_include_dir, host_include_dir

LIBRARY = "libopkit_npu.so"


def available() -> tuple[bool, str]:
    """Can this machine build for the NPU (CANN + torch_npu for this torch)? And if not, why not."""
    from . import cann
    search = cann.find_cann()
    if search.cann is None:
        return False, search.message(None)
    if cann.dist_version("torch_npu") is None:
        return False, "torch_npu is not installed (pip install torch-npu==<your torch version>)"
    problem = cann.torch_pair_problem()
    if problem:
        return False, problem
    if shutil.which("make") is None:
        return False, "`make` is not on PATH (the NPU build uses the Unix Makefiles generator)"
    return True, f"CANN {search.cann.version} at {search.cann.root}"


def library(build_dir: Path, spec=None) -> Path:
    """All ops of a build share one NPU library."""
    return Path(build_dir) / LIBRARY


def _say(log, msg: str) -> None:
    if log is not None:
        log(msg)


def build(specs, build_dir: Path, *, jobs: int | None = None, log=None, check_only: bool = False,
          package: bool = False, soc: str | None = None, compile: bool = True, no_auto_sync: bool = False,
          **options) -> None:
    """Render and build the NPU glue for `specs` (AscendC ops; the build router sends TBE ops elsewhere) into
    `build_dir`; raise BuildError on any failure. Everything is rendered first, then written in one pass,
    then compiled.

    check_only: no CANN needed; compile the binding against the torch-npu wheel (see npu/check.py).
    compile=False with check_only: render only (recheck() compiles later).
    no_auto_sync: every kernel compiled with `--cce-auto-sync=off` (one op: `auto_sync: false` in its op.yaml;
    cmake/opkit_npu.cmake)."""
    from . import cann, glue
    build_dir = Path(build_dir)
    specs = list(specs)
    if not specs:
        raise BuildError("opkit build --target npu: no ops to build")
    seen: dict[str, Path] = {}
    for s in specs:
        if s.snake in seen:
            raise BuildError(f"opkit build --target npu: op {s.snake} is defined twice ({seen[s.snake]} and {s.dir}); "
                             "one library cannot hold both")
        seen[s.snake] = s.dir

    # Without CANN nothing can be compiled for the device: say so first, in one message.
    search = None
    if not check_only:
        search = cann.find_cann()
        if search.cann is None:
            raise BuildError(search.message())

    soc_name, soc_from = cann.detect_soc(soc)
    try:
        info = cann.soc_info(soc_name, search.cann.root if search else None)
    except ValueError as e:
        raise BuildError(str(e)) from None
    torch_version = cann.dist_version("torch") or "2.13.0"
    settings = glue.Settings(soc=soc_name, profile=info.profile, vector_cores=info.vector_cores,
                             torch_version_macro=cann.version_macro(torch_version), host_include=host_include_dir(),
                             family=info.family)
    _say(log, f"npu: SoC {soc_name} ({soc_from}), family {info.family}, {info.vector_cores} vector cores")
    try:
        glues = [glue.op_glue(s) for s in specs]
    except ValueError as e:
        raise BuildError(str(e)) from None
    _warn_tiling_keys(specs, log)
    if not check_only:
        torch_npu_dir = _torch_npu_dir()
        import torch   # the ABI flag torch was built with (2.13 wheels: cxx11 ABI)
        settings.cxx11_abi = int(torch.compiled_with_cxx11_abi())

    # 1. render everything
    src = build_dir / "src"
    binding = src / "binding.cpp"
    files = {binding: glue.render_binding(glues, settings), src / glue.PRELUDE: glue.render_prelude()}
    standin = build_dir / "check" / "standin"
    if check_only:
        for g in glues:
            for v in g.variants:
                files[standin / f"{v.launch}.h"] = glue.render_standin_header(g, v)
        files[standin.parent / "standin_defs.cpp"] = glue.render_standin_defs(glues)
    project = build_dir / "package" if package else None
    if project is not None:
        from . import package as pkg
        files.update(pkg.project_files(specs, project, settings))

    # 2. write them, in one pass
    if check_only and standin.is_dir():
        shutil.rmtree(standin)           # launch headers of ops no longer in the build must not linger
    for path, text in files.items():
        write_if_changed(path, text)
    if project is not None:
        (project / "build.sh").chmod(0o755)
        _say(log, f"npu: package project rendered in {project}")

    # 3. check or build
    if check_only:
        if compile:
            _check_only(glues, settings, build_dir, binding, log, project=project, jobs=jobs)
        return
    _say(log, f"npu: CANN {search.cann.version} at {search.cann.root} (found by {search.cann.found_by})")
    (build_dir / MANIFEST).unlink(missing_ok=True)
    _cmake_build(cmake_args(specs, settings, cann_root=search.cann.root, torch_dir=_torch_dir(),
                            torch_npu_dir=torch_npu_dir, src=src, out_dir=build_dir, auto_sync=not no_auto_sync),
                 build_dir / "cmake", jobs, log)
    lib = library(build_dir)
    if not lib.is_file():
        raise BuildError(f"opkit build --target npu: the build finished but {lib} is missing; see {build_dir / 'cmake'}")
    (build_dir / MANIFEST).write_text("".join(f"{g.snake}\n" for g in glues))
    _say(log, f"npu: built {lib}")
    if project is not None:
        from . import package as pkg
        pkg.build_package(project, cann_root=search.cann.root, log=log)


# -- check-only ------------------------------------------------------------------------------------

def _check_only(glues, settings, build_dir: Path, binding: Path, log, *, project: Path | None,
                jobs: int | None) -> None:
    """Compile checks on what build() rendered: CANN's build-step contracts, CANN's own scripts where
    present, then the binding against torch and the torch-npu wheel."""
    from . import cann, cann_scripts, check, contracts, glue
    # First the contracts of CANN's build steps (contracts.py) and CANN's own scripts where present:
    # cheap, and they need no torch_npu.
    check_dir = build_dir / "check"
    cxx = check.cxx()
    contracts.run_all(glues, work=check_dir / "contracts", cxx=cxx, cmake=cmake_exe(), generator=cann.CMAKE_GENERATOR,
                      prelude=binding.parent / glue.PRELUDE, emulator_include=emulator_include_dir(),
                      project=project, jobs=jobs, log=log)
    cann_scripts.run_if_present(glues, build_dir=build_dir, project=project, cxx=cxx, log=log)
    tc = check.toolchain(log)
    # Each kernel once (first dtype), with the NPU build's definitions (entry rename, DTYPE_*) and opkit's
    # tiling prelude, against opkit's emulator headers: catches rename collisions and prelude breakage.
    # The device compile itself needs CANN's bisheng.
    extra = [([tc.cxx, "-fsyntax-only", *emulator.cflags(), f"-include{binding.parent / glue.PRELUDE}",
               *[f"-D{d}" for d in g.variants[0].defines], str(g.spec.kernel_file)],
              f"checking {g.spec.kernel_file} with the NPU build's definitions ({g.variants[0].defines[0]}, "
              "DTYPE_*, opkit's tiling prelude) against opkit's emulator headers") for g in glues]
    # (--package: op_host/<op>.cpp with its tiling adapter was compiled by the contracts above.)
    defines = ["OPKIT_CHIP_ASCEND310P"] if settings.profile == "ascend310p" else []
    _say(log, f"npu: --check-only: compiling {binding} against torch and torch_npu {tc.torch_npu_dir}")
    lib = check.compile_binding(check_dir, binding, tc, version_macro=settings.torch_version_macro,
                                defines=defines, host_include=settings.host_include, extra_jobs=extra, jobs=jobs)
    _say(log, f"npu: --check-only OK: binding compiled and linked ({lib}); kernels checked against the "
              "emulator's headers only (the device compile needs CANN's bisheng)")


def recheck(build_dir: Path, log=None) -> Path:
    """Re-run only the check compile on what is already rendered in build_dir (no re-render)."""
    from . import cann, check
    tc = check.toolchain(log)
    macro = cann.version_macro(cann.dist_version("torch") or "2.13.0")
    return check.compile_binding(Path(build_dir) / "check", Path(build_dir) / "src" / "binding.cpp", tc,
                                 version_macro=macro, defines=[], host_include=host_include_dir())


# -- real build ------------------------------------------------------------------------------------

def cmake_args(specs, s, *, cann_root: Path | None, torch_dir: Path, torch_npu_dir: Path, src: Path,
               out_dir: Path, auto_sync: bool = True) -> list[str]:
    """The configure of cmake/workspace for the NPU: the same opkit_add_op() per op folder as the emulator
    build, with OPKIT_TARGET=npu (cmake/opkit_npu.cmake) and the glue rendered into ``src``."""
    args = ["-DOPKIT_TARGET=npu", f"-DOPKIT_OP_DIRS={';'.join(str(x.dir) for x in specs)}",
            f"-DOPKIT_OUTPUT_DIR={out_dir}", f"-DOPKIT_NPU_SRC={src}", f"-DSOC_VERSION={s.soc}",
            f"-DOPKIT_NPU_PROFILE={s.profile}", f"-DOPKIT_TORCH_DIR={torch_dir}", f"-DOPKIT_TORCH_NPU_DIR={torch_npu_dir}",
            f"-DOPKIT_TORCH_VERSION_MACRO={s.torch_version_macro}", f"-DOPKIT_CXX11_ABI={s.cxx11_abi}",
            f"-DPython3_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release",
            f"-DOPKIT_NPU_AUTO_SYNC={'ON' if auto_sync else 'OFF'}"]
    if cann_root is not None:
        args.append(f"-DASCEND_CANN_PACKAGE_PATH={cann_root}")
    return args


def _cmake_build(args: list[str], tree: Path, jobs: int | None, log) -> None:
    from ...workspace import cmake_dir
    cmake = cmake_exe()
    if shutil.which("make") is None:
        raise BuildError("opkit build --target npu: `make` is not on PATH; CANN's ascendc_library needs the "
                         "Unix Makefiles generator (install make)")
    from .cann import CMAKE_GENERATOR
    gen = ["-G", CMAKE_GENERATOR]
    env = dict(os.environ)
    env.pop("ASCEND_CUSTOM_OPP_PATH", None)   # custom op paths can disturb CANN builds (docs/facts/ascendc-facts.md §6)
    steps = [[cmake, *gen, "-S", str(cmake_dir() / "workspace"), "-B", str(tree),
              f"-DASCEND_PYTHON_EXECUTABLE={sys.executable}", *args],
             [cmake, "--build", str(tree), "-j", str(jobs or os.cpu_count() or 2)]]
    tree.mkdir(parents=True, exist_ok=True)
    for cmd in steps:
        _say(log, "npu: $ " + " ".join(cmd))
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        (tree / "opkit-build.log").open("a").write(r.stdout + r.stderr)
        if r.returncode != 0:
            raise BuildError(f"opkit build --target npu: `{' '.join(cmd)}` exited {r.returncode}:\n"
                             + _error_excerpt(r.stdout + r.stderr) + f"\nfull log: {tree / 'opkit-build.log'}")


def _error_excerpt(text: str, limit: int = 40) -> str:
    """Each line mentioning an error with the few lines after it (CMake puts the message there)."""
    lines = text.strip().splitlines()
    keep: list[int] = []
    for i, line in enumerate(lines):
        if "error" in line.lower():
            keep += [j for j in range(i, min(i + 4, len(lines))) if j not in keep]
    return "\n".join(lines[j] for j in keep[:limit]) if keep else "\n".join(lines[-limit:])


# -- loader hook ---------------------------------------------------------------------------------------

_LOADED: set[Path] = set()
MANIFEST = "npu_ops.txt"    # snake names of the ops libopkit_npu.so holds, one a line


def load_if_available(build_dir: Path | None = None, *, workspace: Path | None = None, specs=()) -> bool:
    """Load libopkit_npu.so from build_dir (default: <workspace>/build/opkit/npu).

    opkit.load() calls this only when torch_npu is installed (importlib.util.find_spec("torch_npu") is
    not None), after the CPU libraries (they hold the schemas). A missing library, or a loaded op the
    library has no kernel for, is a warning: those ops will not run on the NPU (no silent fallback).
    Returns True if the library is loaded."""
    if build_dir is None:
        build_dir = Path(workspace) / "build" / "opkit" / "npu" if workspace is not None else None
    lib = library(build_dir).resolve() if build_dir is not None else None
    if lib is None or not lib.is_file():
        where = f"the NPU library {lib} is not built" if lib else "there is no workspace, so no NPU library"
        warnings.warn(
            f"opkit: torch_npu is installed but {where}, so opkit ops will NOT run on the NPU (torch_npu "
            "would fall back to the CPU kernels, or raise with TORCH_NPU_FALLBACK_CPU_DISABLE=1). Build it with "
            "`opkit build --target npu` in the workspace.", RuntimeWarning, stacklevel=3)
        return False
    if lib not in _LOADED:
        try:
            import torch_npu  # noqa: F401  (libopkit_npu.so links libtorch_npu; load it first)
        except Exception as e:  # a broken CANN/torch_npu install: say so, keep the CPU ops usable
            warnings.warn(f"opkit: {lib} not loaded: `import torch_npu` failed ({type(e).__name__}: {e}); "
                          "opkit ops will NOT run on the NPU. Is CANN's set_env.sh sourced?", RuntimeWarning,
                          stacklevel=3)
            return False
        from ...registration import register_native
        register_native("PrivateUse1", lib)
        _LOADED.add(lib)
    manifest = lib.parent / MANIFEST
    built = set(manifest.read_text().split()) if manifest.is_file() else set()
    missing = sorted({s.snake for s in specs} - built)
    if missing:
        warnings.warn(f"opkit: {lib} has no NPU kernel for {', '.join(missing)} (built before these ops changed "
                      "or were added): they will NOT run on the NPU; rerun `opkit build --target npu`.",
                      RuntimeWarning, stacklevel=3)
    return True


# -- `opkit test --target npu` ---------------------------------------------------------------------------

FALLBACK_ENV = "TORCH_NPU_FALLBACK_CPU_DISABLE"


def prepare_test_process():
    """For the harness, at the start of an `opkit test --target npu` process: torch_npu's CPU fallback
    disabled (read once, when torch_npu initialises, so it must be set before torch_npu is imported),
    torch_npu imported, an NPU present. Returns the NPU device (PrivateUse1, no device string spelled
    here). Raises OpkitError with the reason otherwise."""
    from ...errors import OpkitError
    if importlib.util.find_spec("torch_npu") is None:
        raise OpkitError("opkit test --target npu: torch_npu is not installed in this Python "
                         f"({sys.executable}); the NPU target needs CANN + torch_npu on an Ascend machine "
                         "(docs/npu.md). Here, use --target cpu (the emulator).")
    if "torch_npu" in sys.modules and os.environ.get(FALLBACK_ENV) != "1":
        raise OpkitError(f"opkit test --target npu: torch_npu was imported before {FALLBACK_ENV}=1 was set, so a "
                         "missing NPU kernel would silently run on the CPU; set it before starting Python")
    os.environ[FALLBACK_ENV] = "1"
    import torch
    try:
        import torch_npu  # noqa: F401
    except Exception as e:
        raise OpkitError(f"opkit test --target npu: `import torch_npu` failed ({type(e).__name__}: {e}); "
                         "is CANN's set_env.sh sourced?") from None
    backend = torch._C._get_privateuse1_backend_name()
    mod = getattr(torch, backend, None)
    if mod is None or not mod.is_available():
        raise OpkitError(f"opkit test --target npu: torch_npu is installed but no NPU is visible "
                         f"(torch.{backend}.is_available() is False); check `npu-smi info`")
    return torch.device(backend, mod.current_device())


# -- helpers ---------------------------------------------------------------------------------------------

def _torch_dir() -> Path:
    from .check import torch_dir
    return torch_dir()


def _torch_npu_dir() -> Path:
    from . import cann
    spec = importlib.util.find_spec("torch_npu")   # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("opkit build --target npu: torch_npu is not installed in this Python "
                         f"({sys.executable}); pip install torch-npu=={cann.dist_version('torch') or '2.13.0'}")
    problem = cann.torch_pair_problem()
    if problem:
        raise BuildError(f"opkit build --target npu: {problem}")
    return Path(list(spec.submodule_search_locations)[0])


def _warn_tiling_keys(specs, log) -> None:
    for s in specs:
        try:
            text = Path(s.kernel_file).read_text(errors="replace")
        except OSError as e:
            raise BuildError(f"{s.kernel_file}: cannot read the kernel ({e})") from None
        if "TILING_KEY_IS" in text:
            _say(log, f"npu: warning: {s.kernel_file} uses TILING_KEY_IS; kernel direct launch has no tiling key "
                      "(the call fails if the tiling sets one); the --package build supports it")
