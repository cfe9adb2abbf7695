"""`--check-only` mirror checks: each one runs here, without CANN, the contract of one step of CANN's own
build that opkit's NPU build depends on, and names the CANN source (public asc-devkit repository,
https://github.com/mirror-cann/asc-devkit, paths below relative to it) it mirrors. CANN's code is not
copied: each check restates the contract in opkit's words and tests opkit's generated files against it.

A check failing means "this step of a real CANN build would fail": the BuildError names the step and
the source. cann_scripts.py runs CANN's real scripts on the same files when an asc-devkit checkout or a
CANN install is present. docs/npu.md lists every step, what checks it here and what only a 910B can.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import BuildError

STANDIN = Path(__file__).resolve().parent / "standin"
STANDIN_CANN = STANDIN / "cann"                 # labelled stand-ins for <cann>/include headers
STANDIN_KERNEL = STANDIN / "tikcpp" / "tikcfw"  # labelled stand-in kernel_operator.h (preprocessing only)


@dataclass(frozen=True)
class Step:
    what: str       # the CANN build step
    source: str     # asc-devkit file:line it mirrors


GENERATOR = Step("kernel direct launch: ascendc_library's sub-builds and extract_host_stub.py",
                 "cmake/asc/legacy_modules/function.cmake:103 (-G ${CMAKE_GENERATOR}), "
                 "device_preprocess_project/CMakeLists.txt:53-91, util/extract_host_stub.py:1566-1598,1857")
COMPUTE_UNIT = Step("--package: the op project's ASCEND_COMPUTE_UNIT check",
                    "cmake/asc/fwk_modules/config.cmake:56-67 (family names; util/opdesc_parser.py:18-60 maps SoCs)")
OP_HOST = Step("--package: CANN's raw op_host compile (opbuild: -std=c++11 -D_GLIBCXX_USE_CXX11_ABI=0 "
               "-I<cann>/include, nothing from CMake)", "cmake/asc/fwk_modules/util/compile_ascendc_all_ops_so.py:97-104")
OP_HOST_LIB = Step("--package: the op project's op_host library compile (C++17 and opkit_include, set by build.sh)",
                   "the msopgen project's op_host/CMakeLists.txt")
TILING = Step("--package: the kernel compile's tiling-struct lookup",
              "tools/build/asc_op_compile_base/adapter/kernel_info_infer.py:136-161,480-545 and the marker of "
              "impl/basic_api/utils/kernel_utils_macros.h:363-385")
LAUNCH = Step("kernel direct launch: the generated aclrtlaunch_<kernel>.h",
              "cmake/asc/legacy_modules/util/constants.py:16-22 (kernel signature), "
              "util/extract_host_stub.py:639,750-752,779-791 (launcher name, header name, declaration)")

# ASCEND_COMPUTE_UNIT values CANN's op project accepts (cmake/asc/fwk_modules/config.cmake:60).
ACCEPTED_COMPUTE_UNITS = ("ascend310b", "ascend310p", "ascend610", "ascend910", "ascend910b", "ascend910_93",
                          "ascend950", "bs9sx1a", "bs9sx2a", "ascend610lite", "mc61am21a", "mc62", "ascend910_96",
                          "kirinx90", "kirin9030", "mc32dm11a", "ascend350")


def failure(step: Step, detail: str) -> BuildError:
    return BuildError(f"opkit build --target npu --check-only: {step.what} would fail on a CANN machine "
                      f"(this check mirrors asc-devkit {step.source}):\n{detail}")


def _run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, LC_ALL="C", LANG="C")
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)


def _excerpt(text: str, limit: int = 25) -> str:
    lines = [l for l in text.splitlines() if l.strip()]
    errors = [l for l in lines if "error" in l.lower()]
    return "\n".join((errors or lines)[:limit])


# -- 1. generator and object paths ------------------------------------------------------------------

_PREPROCESS_PROJECT = """\
# opkit --check-only: the shape of CANN's device_preprocess_project (asc-devkit cmake/asc/legacy_modules/
# device_preprocess_project/CMakeLists.txt:23-53): an OBJECT library over the kernel sources, compiled -E,
# compile_commands.json exported (bisheng_config.cmake:32), the object paths handed to extract_host_stub.py.
cmake_minimum_required(VERSION 3.16)
project(opkit_preprocess_contract CXX)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
add_library(preprocess_obj OBJECT ${SOURCES})
target_compile_options(preprocess_obj PRIVATE -E)
file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/target_objects.txt" CONTENT "$<TARGET_OBJECTS:preprocess_obj>")
"""


def preprocess_project(generator: str, sources: list[Path], work: Path, cmake: str) -> tuple[list[str], dict]:
    """Configure the preprocess-project shape with `generator`; return ($<TARGET_OBJECTS> paths, the
    compile_commands.json entries)."""
    src, tree = work / "project", work / "tree"
    src.mkdir(parents=True, exist_ok=True)
    (src / "CMakeLists.txt").write_text(_PREPROCESS_PROJECT)
    r = _run([cmake, "-G", generator, "-S", str(src), "-B", str(tree),
              "-DSOURCES=" + ";".join(str(s) for s in sources)])
    if r.returncode != 0:
        raise failure(GENERATOR, f"CMake could not configure with -G {generator!r}:\n{_excerpt(r.stdout + r.stderr)}")
    objects = (tree / "target_objects.txt").read_text().split(";")
    return [o for o in objects if o], json.loads((tree / "compile_commands.json").read_text())


def compile_commands_keys(entries: list[dict]) -> set[str]:
    """How extract_host_stub.py keys compile_commands.json: directory joined with the `-o` argument of
    the command split on spaces, not normalised (util/extract_host_stub.py:1577-1587)."""
    keys = set()
    for e in entries:
        words = e["command"].split()
        if "-o" in words:
            keys.add(os.path.join(e["directory"], words[words.index("-o") + 1]))
    return keys


def check_generator(generator: str, sources: list[Path], work: Path, cmake: str) -> None:
    """Every $<TARGET_OBJECTS> path CANN hands to extract_host_stub.py must be a key of its
    compile_commands mapping as given (util/extract_host_stub.py:1857 looks it up un-normalised)."""
    objects, entries = preprocess_project(generator, sources, work, cmake)
    keys = compile_commands_keys(entries)
    missing = [o for o in objects if o not in keys]
    if missing:
        raise failure(GENERATOR, f"with the CMake generator {generator!r} the object path {missing[0]} is not in "
                      f"compile_commands.json as written (there: {sorted(keys)[:1]}); extract_host_stub.py "
                      "raises KeyError. opkit builds the NPU target with 'Unix Makefiles' for this reason.")


# -- 2. ASCEND_COMPUTE_UNIT ----------------------------------------------------------------------------

def check_compute_unit(project: Path) -> None:
    """The value build.sh writes into the op project's presets must be one CANN accepts."""
    presets = json.loads((project / "CMakePresets.json").read_text())
    value = str(presets["cacheVariables"].get("ASCEND_COMPUTE_UNIT", ""))
    bad = [v for v in value.split(";") if v not in ACCEPTED_COMPUTE_UNITS]
    if bad or not value:
        raise failure(COMPUTE_UNIT, f"{project / 'CMakePresets.json'}: ASCEND_COMPUTE_UNIT={value!r}; CANN accepts "
                      f"the SoC family names only: {', '.join(ACCEPTED_COMPUTE_UNITS)} (e.g. ascend910b for "
                      "Ascend910B3, ascend910_93 for Ascend910_9392)")


# -- 3. op_host compiles ----------------------------------------------------------------------------------

def op_host_commands(project: Path, cxx: str) -> list[tuple[list[str], Step, Path]]:
    """Per op_host/<op>.cpp: CANN's raw compile (C++11, old ABI, <cann>/include only; the file's own
    folder is searched by its quoted includes) and the op_host library compile (C++17, opkit_include)."""
    out = []
    for src in sorted((project / "op_host").glob("*.cpp")):
        out.append(([cxx, "-fsyntax-only", "-fPIC", "-std=c++11", "-D_GLIBCXX_USE_CXX11_ABI=0",
                     f"-I{STANDIN_CANN / 'include'}", str(src)], OP_HOST, src))
        out.append(([cxx, "-fsyntax-only", "-fPIC", "-std=c++17", "-DOPKIT_OP_HOST_LIBRARY", f"-I{STANDIN_CANN / 'include'}",
                     f"-I{project / 'opkit_include'}", str(src)], OP_HOST_LIB, src))
    return out


def check_compile(cmd: list[str], step: Step, src: Path) -> None:
    r = _run(cmd, cwd=src.parent.parent)
    if r.returncode != 0:
        raise failure(step, f"{src}:\n{_excerpt(r.stdout + r.stderr)}\n$ {' '.join(cmd)}")


# -- 4. tiling struct registration ---------------------------------------------------------------------

_CUSTOM_TILING = re.compile(r"__enable_custom_tiling\s*([0-9a-zA-Z_:<>]{1,})\s*=\s*default;")
_BUILTIN_HEADER = ("bisheng_compiler", "ccec_compiler", "tikcpp/tikcfw", "gnu/bits", "include/c++",
                   "include/kernel_tiling/kernel_tiling.h")   # kernel_info_infer.py:472-479


def registered_tiling(preprocessed: str) -> tuple[set[str], bool]:
    """(structs registered with REGISTER_TILING_DEFAULT, REGISTER_NONE_TILING used), read from a
    preprocessed kernel the way the kernel compile reads it: the op's own lines only (a `#` line marker
    naming a CANN header folder starts lines it skips)."""
    structs, none = set(), False
    own = True
    for line in preprocessed.splitlines():
        if line.startswith("#"):
            own = not any(k in line for k in _BUILTIN_HEADER)
            continue
        if not own:
            continue
        m = _CUSTOM_TILING.search(line)
        if m:
            structs.add(m.group(1))
        none = none or "__enable_no_register_custom_tiling" in line
    return structs, none


def preprocess_kernel(cxx: str, src: Path, defines: list[str], includes: list[Path], prelude: Path | None = None,
                      precompile: bool = False) -> str:
    """The kernel preprocessed as for the device (__CCE_AICORE__: tiling.h's host half is skipped)."""
    cmd = [cxx, "-E", "-x", "c++", "-std=c++17", "-D__CCE_AICORE__=220", *[f"-D{d}" for d in defines],
           *(["-D__CHECK_FEATURE_AT_PRECOMPILE"] if precompile else []), f"-I{STANDIN_KERNEL}",
           *[f"-I{p}" for p in includes], *([f"-include{prelude}"] if prelude else []), str(src)]
    r = _run(cmd)
    if r.returncode != 0:
        raise BuildError(f"opkit build --target npu --check-only: preprocessing {src} failed:\n"
                         f"{_excerpt(r.stderr)}\n$ {' '.join(cmd)}")
    return r.stdout


def check_tiling_registration(project: Path, spec, cxx: str, emulator_include: Path) -> None:
    src = project / "op_kernel" / f"{spec.snake}.cpp"
    text = preprocess_kernel(cxx, src, [f"DTYPE_{n.upper()}=float" for n in _io_names(spec)],
                             [project / "op_kernel", emulator_include], precompile=True)
    structs, none = registered_tiling(text)
    if none and not structs:
        return
    if structs != {spec.tiling_struct}:
        found = ", ".join(sorted(structs)) or "none"
        raise failure(TILING, f"{src}: the tiling struct registered for the kernel compile is {found}; expected "
                      f"REGISTER_TILING_DEFAULT({spec.tiling_struct}) (without it CANN generates GET_TILING_DATA* "
                      "for its own tiling type and the kernel reads the wrong struct)")


def _io_names(spec) -> list[str]:
    return [i.name for i in spec.inputs] + [o.name for o in spec.outputs]


# -- 5. launch header name and signature ---------------------------------------------------------------

_KERNEL = re.compile(r"__attribute__\(\(cce_kernel\)\)\s*(?:\[aicore\]|__attribute__\(\(cce_aicore\)\))\s*"
                     r"(.+?)\s*\{", re.DOTALL)


def kernel_signatures(preprocessed: str) -> list[tuple[str, int]]:
    """(entry name, number of parameters) of every kernel entry, as extract_host_stub.py finds them."""
    out = []
    for m in _KERNEL.finditer(preprocessed):
        sig = m.group(1)
        head, _, params = sig.partition("(")
        name = re.findall(r"\w+", head)[-1]
        params = params.rsplit(")", 1)[0].strip()
        depth, count = 0, (1 if params and params != "void" else 0)
        for ch in params:
            depth += ch in "(<"
            depth -= ch in ")>"
            count += ch == "," and depth == 0
        out.append((name, count))
    return out


def kernel_includes(spec, emulator_include: Path) -> list[Path]:
    """A kernel's include path as the NPU CMake gives it (opkit_npu.cmake: ascendc_include_directories with
    the op folder and OPKIT_HOST_INCLUDE, which holds the kernel toolkit opkit/kernel_util.h), then the
    emulator's headers standing in for CANN's."""
    from ...workspace import host_include_dir
    return [Path(spec.kernel_file).parent, host_include_dir(), emulator_include]


def check_launch_header(glue, variant, cxx: str, prelude: Path, emulator_include: Path) -> None:
    """CANN names the launcher aclrtlaunch_<entry as preprocessed> (extract_host_stub.py:639) in a header
    of that name (:750-752), with blockDim, stream and one void* per kernel parameter (:779-791). The
    binding includes <v.launch>.h and passes the op's inputs, outputs, workspace and tiling."""
    spec = glue.spec
    text = preprocess_kernel(cxx, Path(spec.kernel_file), list(variant.defines),
                             kernel_includes(spec, emulator_include), prelude=prelude)
    sigs = kernel_signatures(text)
    want = (variant.launch.replace("aclrtlaunch_", "", 1), len(glue.gm_args))
    if want not in sigs:
        have = ", ".join(f"aclrtlaunch_{n}({c} args)" for n, c in sigs) or "no kernel entry"
        raise failure(LAUNCH, f"{spec.kernel_file} with {variant.defines[0]}: CANN would generate {have}; the "
                      f"binding calls {variant.launch} from {variant.launch}.h with {want[1]} arguments "
                      f"({', '.join(glue.gm_args)})")


# -- all of them --------------------------------------------------------------------------------------

def run_all(glues, *, work: Path, cxx: str, cmake: str, generator: str, prelude: Path, emulator_include: Path,
            project: Path | None = None, jobs: int | None = None, log=None) -> int:
    """Every mirror check for this build (the package ones when `project` is rendered), `jobs` at a time;
    raises the first failure (all failures' messages joined). Returns the number of checks run."""
    from concurrent.futures import ThreadPoolExecutor

    tasks = [lambda: check_generator(generator, [Path(g.spec.kernel_file) for g in glues], work / "generator", cmake)]
    tasks += [(lambda g=g, v=v: check_launch_header(g, v, cxx, prelude, emulator_include))
              for g in glues for v in g.variants]
    if project is not None:
        tasks.append(lambda: check_compute_unit(project))
        tasks += [(lambda c=c: check_compile(*c)) for c in op_host_commands(project, cxx)]
        tasks += [(lambda g=g: check_tiling_registration(project, g.spec, cxx, emulator_include)) for g in glues]
    errors: list[BuildError] = []

    def run(task) -> None:
        try:
            task()
        except BuildError as e:
            errors.append(e)
    with ThreadPoolExecutor(max(1, jobs or os.cpu_count() or 2)) as pool:
        list(pool.map(run, tasks))
    if errors:
        raise BuildError("\n\n".join(str(e) for e in errors[:8]) +
                         (f"\n\n... and {len(errors) - 8} more" if len(errors) > 8 else ""))
    if log:
        log(f"npu: --check-only: {len(tasks)} CANN build-step checks passed (docs/npu.md lists them)")
    return len(tasks)
