"""`--check-only` with CANN's own build scripts, when their sources are on this machine: an asc-devkit
checkout (`OPKIT_ASC_DEVKIT=<checkout>`, https://github.com/mirror-cann/asc-devkit) or a CANN install
(ASCEND_HOME_PATH; its <arch>-linux/tikcpp/ascendc_kernel_cmake is asc-devkit's cmake/asc). They run on
the generated build exactly as CANN runs them, with clearly labelled stand-ins only where CANN needs its
device compiler or binaries: the kernels are preprocessed by the host compiler with standin/tikcpp/tikcfw
(bisheng's spelling of the kernel entry), and the raw op_host compile sees standin/cann/include and empty
stand-in libexe_graph/libregister/libtiling_api. So a CANN change that breaks opkit fails here:

1. legacy_modules/util/extract_host_stub.py (imported from the sources): its compile_commands mapping and
   the un-normalised lookup of the $<TARGET_OBJECTS> paths of a CMake project configured with opkit's
   generator; then its kernel-signature parser and header generator on every preprocessed kernel variant.
   The headers it generates REPLACE opkit's stand-in launch headers, so the binding compile that follows
   compiles against CANN's own aclrtlaunch_<kernel>.h.
2. fwk_modules/config.cmake (cmake -P) with the ASCEND_COMPUTE_UNIT of the rendered package.
3. fwk_modules/util/compile_ascendc_all_ops_so.py: CANN's raw op_host compile and link, on op_host/*.cpp.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ...errors import BuildError
from . import contracts

DEVKIT_ENV = "OPKIT_ASC_DEVKIT"

_EXTRACT = r"""
import json, sys
import extract_host_stub as e
spec = json.load(open(sys.argv[1]))
mapping, _ = e.load_compile_commands(spec["compile_commands"])
for obj in spec["objects"]:
    mapping[obj]                                  # as generate_host_config_content() looks it up
headers = {}
for path in spec["preprocessed"]:
    for group in e.parse_func_signature_by_filepaths([path], "c220"):
        for sign in e.trans_func_sign_group(group).func_signs:
            headers[e.get_header_name_by_func_sign(sign)] = e.generate_header_code(sign)
json.dump(headers, sys.stdout)
"""


def asc_cmake_dir() -> tuple[Path, str] | None:
    """CANN's cmake/asc folder and where it came from, or None."""
    devkit = os.environ.get(DEVKIT_ENV)
    if devkit:
        root = Path(devkit).expanduser() / "cmake" / "asc"
        if not (root / "legacy_modules" / "util" / "extract_host_stub.py").is_file():
            raise BuildError(f"{DEVKIT_ENV}={devkit}: no cmake/asc/legacy_modules/util/extract_host_stub.py there; "
                             "point it at a checkout of the asc-devkit repository")
        return root, f"{DEVKIT_ENV}={devkit}"
    from .cann import find_cann
    found = find_cann().cann
    if found is not None:
        return found.ascendc_cmake.parent, f"CANN at {found.root}"
    return None


def _fail(script: str, origin: str, detail: str) -> BuildError:
    return BuildError(f"opkit build --target npu --check-only: CANN's own {script} (from {origin}) failed on the "
                      f"generated build:\n{detail}")


def _run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))


def run_if_present(glues, *, build_dir: Path, project: Path | None, cxx: str, log=None) -> bool:
    found = asc_cmake_dir()
    say = log or (lambda s: None)
    if found is None:
        say(f"npu: --check-only: CANN's own scripts not run (no CANN install, {DEVKIT_ENV} unset; docs/npu.md)")
        return False
    root, origin = found
    work = Path(build_dir) / "check" / "cann_scripts"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    n = _extract_host_stub(glues, root, origin, work, build_dir, cxx)
    say(f"npu: --check-only: CANN's extract_host_stub.py ({origin}) generated the {n} launch headers the binding "
        "is compiled against")
    if project is not None:
        _config_cmake(root, origin, project, work)
        _raw_op_host(root, origin, project, work, cxx)
        say("npu: --check-only: CANN's fwk_modules/config.cmake accepted ASCEND_COMPUTE_UNIT and "
            "compile_ascendc_all_ops_so.py compiled and linked op_host/*.cpp")
    return True


def _extract_host_stub(glues, root: Path, origin: str, work: Path, build_dir: Path, cxx: str) -> int:
    from ...toolchain.tools import cmake_exe
    from ...workspace import emulator_include_dir
    from .cann import CMAKE_GENERATOR
    from .glue import PRELUDE

    objects, _ = contracts.preprocess_project(CMAKE_GENERATOR, [Path(g.spec.kernel_file) for g in glues],
                                               work / "preprocess", cmake_exe())
    preprocessed = []
    for g in glues:
        for v in g.variants:
            text = contracts.preprocess_kernel(cxx, Path(g.spec.kernel_file), list(v.defines),
                                               contracts.kernel_includes(g.spec, emulator_include_dir()),
                                               prelude=Path(build_dir) / "src" / PRELUDE)
            path = work / f"{v.launch}.i"
            path.write_text(text)
            preprocessed.append(str(path))
    job = work / "extract.json"
    job.write_text(json.dumps({"compile_commands": str(work / "preprocess" / "tree" / "compile_commands.json"),
                               "objects": objects, "preprocessed": preprocessed}))
    util = root / "legacy_modules" / "util"
    r = _run([sys.executable, "-c", _EXTRACT, str(job)], cwd=util)     # CANN runs it from util/ too
    if r.returncode != 0:
        raise _fail("legacy_modules/util/extract_host_stub.py", origin, (r.stderr or r.stdout)[-3000:])
    headers = json.loads(r.stdout)
    standin = Path(build_dir) / "check" / "standin"
    for g in glues:
        for v in g.variants:
            text = headers.get(f"{v.launch}.h")
            if text is None:
                raise _fail("legacy_modules/util/extract_host_stub.py", origin,
                            f"no {v.launch}.h generated from {g.spec.kernel_file} (got: {', '.join(sorted(headers))})")
            (standin / f"{v.launch}.h").write_text(
                f"// Generated by CANN's extract_host_stub.py ({origin}) from {g.spec.kernel_file}\n{text}")
    return len(headers)


def _config_cmake(root: Path, origin: str, project: Path, work: Path) -> None:
    from ...toolchain.tools import cmake_exe
    value = json.loads((project / "CMakePresets.json").read_text())["cacheVariables"]["ASCEND_COMPUTE_UNIT"]
    script = work / "compute_unit.cmake"
    script.write_text(f'set(ASCEND_COMPUTE_UNIT "{value}")\ninclude("{root / "fwk_modules" / "config.cmake"}")\n')
    r = _run([cmake_exe(), "-P", str(script)], cwd=work)
    if r.returncode != 0:
        raise _fail("fwk_modules/config.cmake", origin, (r.stderr or r.stdout)[-3000:])


def _raw_op_host(root: Path, origin: str, project: Path, work: Path, cxx: str) -> None:
    """compile_ascendc_all_ops_so.py against a stand-in CANN root: standin/cann/include and empty libraries
    named as CANN's (the link only needs them to exist; nothing here is loaded)."""
    cann = work / "standin_cann"
    (cann / "lib64").mkdir(parents=True)
    (cann / "include").symlink_to(contracts.STANDIN_CANN / "include")
    empty = work / "empty.c"
    empty.write_text("/* opkit --check-only: empty stand-in for a CANN library */\n")
    for lib in ("exe_graph", "register", "tiling_api"):
        r = _run([cxx, "-shared", "-x", "c", str(empty), "-o", str(cann / "lib64" / f"lib{lib}.so")])
        if r.returncode != 0:
            raise BuildError(f"opkit build --target npu --check-only: could not make the stand-in lib{lib}.so:\n{r.stderr}")
    out = work / "opbuild"
    out.mkdir()
    srcs = " ".join(str(p) for p in sorted((project / "op_host").glob("*.cpp")))
    r = _run([sys.executable, str(root / "fwk_modules" / "util" / "compile_ascendc_all_ops_so.py"), "-s", srcs,
              "-d", str(out), "-o", "ascend_all_ops", "-p", str(cann), "-c++", cxx, "-j", "2"], cwd=work)
    if r.returncode != 0 or not (out / "libascend_all_ops.so").is_file():
        raise _fail("fwk_modules/util/compile_ascendc_all_ops_so.py", origin, (r.stdout + r.stderr)[-3000:])
