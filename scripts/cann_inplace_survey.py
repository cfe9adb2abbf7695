"""cann_inplace_survey.py REPO [REPO ...] --opbase OPBASE [--json OUT] [--jobs N] [--list] [--only REGEX]
[--failed-from JSON] -- how many of CANN's
own A2 vector kernels compile unchanged on the emulator, compiled in place the way CANN's kernel build sees them.

Opt-in (not CI). REPO is a checkout of hicann/ops-math, ops-nn, ops-cv or ops-transformer (any repository laid out as
<category>/<op>/{op_host,op_kernel}), OPBASE a checkout of hicann/opbase; none is vendored here.

Which files (the A2 vector-side kernel entries):
  outside tests/ and scripts/ (the op generator's template skeleton), every op_kernel/ source that defines a `__global__ __aicore__` function, directly in op_kernel/ or in
  op_kernel/arch22/; skipped and counted apart: other archNN/ folders, the Ascend 950 `*_apt.cpp` entries,
  ops whose op_host `*_def.cpp` never names ascend910b, cube kernels (KERNEL_TYPE_AIC_ONLY / KERNEL_TYPE_MIX_*), and
  kernels CANN's build infers as MIX: ones that register a Matmul object (REGIST_MATMUL_OBJ / REGIST_CUBE_OBJ, also
  through a macro or an op_kernel/ header, on the branch A2 takes; see registers_matmul).
How each compiles (`g++ -fsyntax-only $(opkit cflags)`, nothing else):
  - the op's tiling struct first, as CANN's build gives it to the kernel: the header it generates from the op_host
    registrations (BEGIN_TILING_DATA_DEF / REGISTER_TILING_DATA_CLASS), written by opkit.cannproject.tiling_view
    from the op's own `op_host/*tiling*.h` (op_host/arch22/ too) and every registration of the op type in the
    repository; with --raw-tiling-headers those op_host headers are included as they are instead (the method of
    issue 39's first measurement: their host-side includes then have to resolve);
  - the include folders CANN's kernel build gives the kernel: the op's op_kernel/ and op_host/, and
    `ascendc/common` as the ops repositories' cmake stages it (cmake/gen_ops_info.cmake: opbase's
    pkg_inc/op_common/atvoss and include/op_common/op_kernel copied into `<impl>/ascendc/common`); the kernel is
    compiled from a staging folder where each op's op_kernel/ sits under the op's name beside its siblings, as
    the build copies them (`<impl>/<op>/`), so `#include "../foreach_utils/x.h"` resolves, and the category's
    `<op>/op_kernel/` folders one level up, as in the source tree the CPU-debug (`__CCE_KT_TEST__`) includes name,
    and the repository's common/inc/op_kernel/ as `<impl>/inc/` (ops-nn cmake/gen_ops_info.cmake:546), and its
    common/include/kernel/*.* files in `ascendc/common` (ops-transformer cmake/func.cmake:331-337);
  - -DOPKIT_CANN_OP_TYPE=<the OpType its *_def.cpp adds>, as `opkit import-cann` builds it;
  - every DTYPE_<X> the kernel names as float (ORIG_DTYPE_<X> as DT_FLOAT), except one the kernel declares itself
    (`constexpr uint32_t DTYPE_MODE = ...`), FORMAT_<X> of each input and output as FORMAT_ND;
  - the entry renamed as `opkit import-cann` renames it (python/opkit/cannproject/kernel.py), and a templated
    entry instantiated (`&entry<args>`) with the first arguments its `ASCENDC_TPL_SEL` selects
    (ASCENDC_TPL_DATATYPE_* parameters as their C++ type; a tiling-key macro as its #define value; a SEL inside a
    macro body ignored; the `#if` branches the emulator's flags take -- __CCE_KT_TEST__, __CCE_AICORE__ 220,
    __NPU_ARCH__ 2201 --, so an A2 `extern "C"` entry beside an Ascend 950 template is not instantiated), since -fsyntax-only never instantiates an
    uninstantiated template: a templated entry that cannot be instantiated does not compile.
A file that does not compile stays in the denominator. The summary groups failures by cause (the first
error, normalised: a missing header, an undeclared name, a name the emulator rejects, ...). The work folder
is a temporary directory, deleted at the end. Exit 0 always: the figures are the output.
To iterate on a fix without the whole (slow) run: --only REGEX keeps the entries whose path relative to the
repository matches; --failed-from JSON keeps those an earlier run's --json listed as failing. The figures are
then of that subset only, and say so.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from opkit import emulator  # noqa: E402
from opkit.cannproject import tiling_view  # noqa: E402
from opkit.emulator import branches  # noqa: E402

ENTRY_RE = re.compile(r"__global__\s+__aicore__\s+void\s+(\w+)\s*\(")
TPL_ENTRY_RE = re.compile(r"template\s*<([^;{]*?)>\s*(?:extern\s+\"C\"\s*)?__global__\s+__aicore__\s+void\s+(\w+)\s*\(")
CUBE_RE = re.compile(r"KERNEL_TYPE_AIC_ONLY|KERNEL_TYPE_MIX_AI[CV]")
ARCH_DIR = re.compile(r"^arch(\d\d)$")
C_DT = {"C_DT_FLOAT": "float", "C_DT_FLOAT16": "half", "C_DT_BF16": "bfloat16_t", "C_DT_INT8": "int8_t",
        "C_DT_UINT8": "uint8_t", "C_DT_INT16": "int16_t", "C_DT_UINT16": "uint16_t", "C_DT_INT32": "int32_t",
        "C_DT_UINT32": "uint32_t", "C_DT_INT64": "int64_t", "C_DT_UINT64": "uint64_t", "C_DT_BOOL": "bool",
        "C_DT_DOUBLE": "double"}


def _calls(text: str, name: str) -> list[str]:
    """Argument strings of every `name(...)` in text (balanced parentheses)."""
    out, i = [], 0
    while True:
        i = text.find(name + "(", i)
        if i < 0:
            return out
        j, depth = i + len(name), 0
        for k in range(j, len(text)):
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    out.append(text[j + 1:k])
                    break
        i = j


def _split(args: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


# `#if`s on what the emulator's flags define are decided (opkit.emulator.branches)
_kt_branch = branches.emulator_branch


def _macros(text: str) -> dict[str, str]:
    """Object-like `#define NAME value` of a header (the tiling-key names a template argument may be)."""
    text = re.sub(r"\\\n", " ", text)  # continuation lines
    return {k: re.sub(r"\s+", " ", v) for k, v in re.findall(r"^\s*#\s*define\s+(\w+)[ \t]+([^\n]+?)\s*$", text, re.M)}


def _first_value(kind: str, vals: list[str]) -> str | None:
    if kind == "UINT":                     # (name, bits, UI_LIST|UI_RANGE|UI_MIX, ...)
        rest = vals[2:]
        if rest and rest[0].endswith("UI_LIST") and len(rest) > 1:
            return rest[1]
        if rest and rest[0].endswith(("UI_RANGE", "UI_MIX")) and len(rest) > 2:
            return rest[2]
        return None
    if kind == "DATATYPE":
        v = next((x for x in vals[1:] if x.startswith("C_DT_")), None)
        return C_DT.get(v, v)
    if kind == "BOOL":
        return "true" if vals[1:] and vals[1] in ("1", "true") else ("false" if vals[1:] else None)
    v = vals[1] if len(vals) > 1 else None        # DTYPE / FORMAT / KERNEL_TYPE: integer ids
    return v


def tpl_args(op_kernel: Path) -> list[str] | None:
    """The first template arguments ASCENDC_TPL_SEL selects, in declaration order; None without a declaration."""
    text = ""
    for h in sorted(op_kernel.rglob("*.h")):
        if "arch35" in h.parts:
            continue
        t = _strip_comments(h.read_text(errors="replace"))
        if "ASCENDC_TPL_ARGS_DECL" in t:
            text = t
            break
    if not text:
        return None
    macros = _macros(text)
    text = re.sub(r"^\s*#\s*define\b(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)  # a SEL inside a macro body is a pattern
    decl = _calls(text, "ASCENDC_TPL_ARGS_DECL")
    if not decl:
        return None
    params = []
    for p in _split(decl[0])[1:]:
        m = re.match(r"ASCENDC_TPL_(\w+?)_DECL\((.*)\)$", p, re.S)
        if m:
            params.append((m.group(1), _split(m.group(2))))
    chosen = {}
    sels = _calls(text, "ASCENDC_TPL_ARGS_SEL")
    if sels:
        for p in _split(sels[0]):
            m = re.match(r"ASCENDC_TPL_(\w+?)_SEL\((.*)\)$", p, re.S)
            if m and m.group(1) != "KERNEL_TYPE":
                chosen[_split(m.group(2))[0]] = (m.group(1), _split(m.group(2)))
    out = []
    for kind, vals in params:
        k2, v2 = chosen.get(vals[0], (kind, vals))
        if k2 == "UINT" and v2 is not vals:      # a SEL list has no bit width: (name, UI_LIST, v...)
            v2 = [v2[0], "", *v2[1:]]
        v = _first_value(k2, v2) or "0"
        for _ in range(4):  # the build instantiates with the values: a tiling-key macro the entry never includes
            v = macros.get(v, v).split(",")[0].strip()  # a macro naming a whole UI_LIST: its first value
        out.append(v)
    return out


def ops_of(repo: Path):
    for op_kernel in sorted(repo.rglob("op_kernel")):
        rel = op_kernel.relative_to(repo).parts
        # scripts/opgen/template/: the op generator's skeleton (placeholders, `Init()` without arguments), no op
        if op_kernel.is_dir() and (op_kernel.parent / "op_host").is_dir() and "tests" not in rel and rel[0] != "scripts":
            yield op_kernel.parent


REGIST_RE = re.compile(r"\bREGIST_(?:MATMUL|CUBE)_OBJ(?:_STATIC)?\s*\(")
QUOTE_INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def registers_matmul(kernel: Path, op_kernel: Path) -> bool:
    """Whether the kernel, or an op_kernel/ header it includes, registers a Matmul object on the branch the
    emulator's flags take. CANN's build then infers a MIX kernel without any KERNEL_TYPE mark: REGIST_MATMUL_OBJ is
    REGIST_CUBE_OBJ (asc-devkit 82b89a15 include/adv_api/matmul/matmul_intf.h:41); a preprocessed kernel naming
    `AscendC::KfcServer` is compiled as MIX (tools/build/asc_op_compile_base/asc_op_compiler/kernel_info_infer.py:498-500),
    and on A2 that pass preprocesses for dav-<chip>-cube and -vec and reads both (:795-819). REGIST_CUBE_OBJ declares a
    KfcServer on the device where SPLIT_CORE_CUBE is defined (impl/adv_api/detail/kfc/kfc_register_obj.h:276,
    :303-317), i.e. __DAV_CUBE__ on 2201 (impl/utils/sys_macros.h:61-63) -- bisheng's macro for the cube sub-arch,
    inferred, not defined in asc-devkit: see docs/emulator.md, round 17."""
    seen, todo, texts = set(), [kernel], []
    while todo:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        text = _kt_branch(_strip_comments(f.read_text(errors="replace")))
        texts.append(text)
        for inc in QUOTE_INC.findall(text):  # quote includes, as the compiler looks: beside the file, then op_kernel/
            for base in (f.parent, op_kernel):
                cand = (base / inc).resolve()
                if cand.is_file() and op_kernel.resolve().parent.parent in cand.parents:  # within the category
                    todo.append(cand)
                    break
    # a macro whose body registers (ops-cv upsample_nearest3d_grad, ops-transformer nsa_*) counts where it is invoked
    define = re.compile(r"^\s*#\s*define\s+(\w+)((?:[^\n]*\\\n)*[^\n]*)", re.M)
    bodies = {m[1]: m[2] for t in texts for m in define.finditer(t)}
    calls, grew = REGIST_RE, True
    while grew:  # macros invoking a registering macro register too
        names = {n for n, b in bodies.items() if calls.search(b)}
        new = re.compile(REGIST_RE.pattern + ("|" + "|".join(rf"\b{n}\b" for n in sorted(names)) if names else ""))
        grew, calls = new.pattern != calls.pattern, new
    # a call is outside directives: `#undef NAME`, `#ifdef NAME`, `#if defined(NAME)` name a macro, invoke nothing
    directive = re.compile(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", re.M)
    return any(calls.search(directive.sub("", t)) for t in texts)


def entries(op: Path) -> tuple[list[Path], Counter]:
    """(A2 vector entry files of the op, skipped files by reason)."""
    skipped, files = Counter(), []
    k = op / "op_kernel"
    cands = [p for p in k.rglob("*.cpp")]
    defs = " ".join(p.read_text(errors="replace") for p in (op / "op_host").rglob("*_def.cpp"))
    for p in sorted(cands):
        rel = p.relative_to(k).parts
        text = p.read_text(errors="replace")
        if not ENTRY_RE.search(text):
            continue
        arch = [a for a in rel[:-1] if ARCH_DIR.match(a)]
        if arch and arch != ["arch22"] or len(rel) > 2 or (len(rel) == 2 and rel[0] != "arch22"):
            skipped["other arch / subfolder"] += 1
        elif p.name.endswith("_apt.cpp"):
            skipped["Ascend 950 *_apt.cpp"] += 1
        elif "ascend910b" not in defs:
            skipped["*_def.cpp does not name ascend910b"] += 1
        elif CUBE_RE.search(text):
            skipped["cube / MIX kernel"] += 1
        elif registers_matmul(p, k):
            skipped["MIX kernel (REGIST_MATMUL_OBJ, CANN infers MIX)"] += 1
        else:
            files.append(p)
    return files, skipped


def stage_common(opbase: Path, work: Path, repo: Path | None = None) -> Path:
    """<work>/ascendc/common as the ops repositories' kernel build stages it (cmake/gen_ops_info.cmake), plus the
    repository's own common/include/kernel/ files, which ops-transformer's kernel build copies there (c29bc106
    cmake/func.cmake:331-337, `cp -rf ${OPS_ADV_UTILS_KERNEL_INC}/*.* .../ascendc/common`, OPS_ADV_UTILS_KERNEL_INC =
    common/include/kernel, cmake/config.cmake:50): a kernel's `#include "util.h"` finds them."""
    common = work / "ascendc" / "common"
    common.mkdir(parents=True)
    (common / "atvoss").symlink_to(opbase / "pkg_inc" / "op_common" / "atvoss")
    (common / "op_kernel").symlink_to(opbase / "include" / "op_common" / "op_kernel")
    shared = repo / "common" / "include" / "kernel" if repo is not None else None
    if shared is not None and shared.is_dir():
        for f in sorted(shared.iterdir()):  # the files `*.*` names: a dot in the name, not leading
            if f.is_file() and "." in f.name and not f.name.startswith(".") and not (common / f.name).exists():
                (common / f.name).symlink_to(f)
    return common


def op_type_of(op: Path, kernel: Path) -> str | None:
    """The OpType the op's *_def.cpp adds (OP_ADD), the one named like the kernel file if several."""
    types = []
    for d in sorted((op / "op_host").rglob("*_def.cpp")):
        types += re.findall(r"\bOP_ADD\s*\(\s*(\w+)", d.read_text(errors="replace"))
    stem = kernel.stem.replace("_", "").lower()
    return next((t for t in types if t.lower() == stem), types[0] if types else None)


GE_DT = {"FLOAT": "float", "FLOAT16": "half", "BF16": "bfloat16_t", "INT8": "int8_t", "UINT8": "uint8_t",
         "INT16": "int16_t", "UINT16": "uint16_t", "INT32": "int32_t", "UINT32": "uint32_t", "INT64": "int64_t",
         "UINT64": "uint64_t", "BOOL": "bool", "DOUBLE": "double"}
FIRST_DTYPE = True  # --all-float: every DTYPE_<X> float (the method of rounds 1-4)


def first_dtypes(op: Path) -> dict[str, str]:
    """{INPUT/OUTPUT NAME: ge dtype} of the first column of the OpDef's DataType lists: one combination the
    build compiles the kernel for (the columns of `.DataType({...})` are the registered combinations). Names
    whose list is not a literal, or whose first type has no C type here, are left out (float)."""
    out: dict[str, str] = {}
    for d in sorted((op / "op_host").rglob("*_def.cpp")):
        if any(ARCH_DIR.match(x) and x != "arch22" for x in d.relative_to(op).parts):
            continue
        text = _strip_comments(d.read_text(errors="replace"))
        for m in re.finditer(r"(?:Input|Output)\s*\(\s*\"(\w+)\"\s*\)(.*?)(?=\b(?:Input|Output)\s*\(|$)", text, re.S):
            dt = re.search(r"\.DataType(?:List)?\s*\(\s*\{\s*ge::DT_(\w+)", m.group(2))
            if dt and dt.group(1) in GE_DT:
                out.setdefault(m.group(1).upper(), dt.group(1))
    return out


def translation_unit(kernel: Path, op: Path, staged: Path, repo: Path, raw: bool, work: Path,
                     idx: int) -> tuple[str, list[str]]:
    text = _kt_branch(_strip_comments(kernel.read_text(errors="replace")))
    host = op / "op_host"
    tiling = sorted(h for d in (host, host / "arch22") if d.is_dir() for h in d.glob("*tiling*.h"))
    op_type = op_type_of(op, kernel)
    m = TPL_ENTRY_RE.search(text)
    name = m.group(2) if m else ENTRY_RE.search(text).group(1)
    src = '#include "kernel_operator.h"\n' + "".join(f"#include <{h}>\n" for h in ("cmath", "cstdlib", "cstring"))
    if raw:
        src += "".join(f'#include "{h}"\n' for h in tiling)
    else:
        view = work / f"tiling{idx}.h"
        seen = tiling_view.kernel_text(kernel)
        if tiling_view.registers_own_struct(seen):  # no registered class
            view.write_text(tiling_view.custom_view())
        else:  # + the op_kernel/ tiling headers op_host includes (ops-math is_neg_inf), less the kernel's own structs
            view.write_text(tiling_view.kernel_view(op_type, tiling + tiling_view.host_kernel_headers(host), [repo],
                                                    tiling_view.kernel_structs(seen)))
        src += f'#include "{view}"\n'
    src += f'#define {name} opkit_cann_entry_{name}\n#include "{staged}"\n#undef {name}\n'
    if m:
        args = tpl_args(op / "op_kernel")
        nparams = len(_split(m.group(1)))
        if args is None or len(args) != nparams:
            args = (args or []) + ["0"] * max(0, nparams - len(args or []))
            args = args[:nparams]
        src += f"namespace {{ auto* const opkit_inst = &opkit_cann_entry_{name}<{', '.join(args)}>; }}\n"
    # every DTYPE_<X> of the kernel and its own headers, as float
    names = set()  # CANN's build defines DTYPE_<X> / ORIG_DTYPE_<X> for every input and output of the OpDef
    formats = set()  # and FORMAT_<X> (ops-nn e5c3fa93 scripts/util/ascendc_impl_build.py:89-91), here ND
    for d in (op / "op_host").rglob("*_def.cpp"):
        for io in re.findall(r"(?:\.|->)(?:Input|Output)\s*\(\s*\"(\w+)\"", d.read_text(errors="replace")):
            names |= {f"DTYPE_{io.upper()}", f"ORIG_DTYPE_{io.upper()}"}
            formats.add(f"FORMAT_{io.upper()}")
    own = set()  # a DTYPE_<X> the kernel declares itself (`constexpr int DTYPE_MODE = ...`) is not the build's
    for f in [kernel, *(op / "op_kernel").rglob("*.h")]:
        t = f.read_text(errors="replace")
        names |= set(re.findall(r"\b(?:ORIG_)?DTYPE_[A-Z0-9_]+\b", t))
        own |= set(re.findall(r"\b((?:ORIG_)?DTYPE_[A-Z0-9_]+)\s*=(?!=)", t))
        own |= set(re.findall(r"#\s*define\s+((?:ORIG_)?DTYPE_[A-Z0-9_]+)", t))
    names -= own
    first = first_dtypes(op) if FIRST_DTYPE else {}

    def value(n: str) -> str:
        io = n.removeprefix("ORIG_").removeprefix("DTYPE_")
        dt = first.get(io, "FLOAT")
        return f"DT_{dt}" if n.startswith("ORIG_") else GE_DT[dt]
    defs = [f"-D{n}={value(n)}" for n in sorted(names)]
    defs += [f"-D{n}=FORMAT_ND" for n in sorted(formats)]
    if op_type:
        defs.append(f"-DOPKIT_CANN_OP_TYPE={op_type}")
    return src, defs


CAUSES = [
    (re.compile(r"fatal error: ([^:]+): No such file"), "missing header {0}"),
    (re.compile(r"not supported on the emulator: ([\w:<>/.]+)"), "rejected by the emulator: {0}"),
    (re.compile(r"error: '([\w:]+)' (?:was not declared|has not been declared|is not a member of)"), "undeclared {0}"),
    (re.compile(r"error: '([\w:]+)' is not a member of '([\w:]+)'"), "{1}::{0} not declared"),
    (re.compile(r"error: ‘([\w:]+)’ is not a member of ‘([\w:]+)’"), "{1}::{0} not declared"),
    (re.compile(r"error: ‘([\w:]+)’ (?:was not declared|has not been declared|does not name a type)"), "undeclared {0}"),
    (re.compile(r"error: '([\w:]+)' does not name a type"), "undeclared {0}"),
    (re.compile(r"error: no matching function for call to ‘([\w:]+)"), "no overload {0}"),
    (re.compile(r"error: #error (.*)"), "#error {0}"),
]


def cause(stderr: str) -> str:
    first = next((ln for ln in stderr.splitlines() if "error" in ln), stderr.strip()[:200])
    for pat, fmt in CAUSES:
        m = pat.search(first)
        if m:
            return fmt.format(*m.groups())
    return re.sub(r"^.*?error: ", "", re.sub(r"\d+", "N", first))[:120]


def stage(op: Path, kernel: Path, work: Path, staged_roots: dict, repo: Path) -> Path:
    """The kernel's path in a folder where every sibling op's op_kernel/ sits under the op's name."""
    root = staged_roots.get(op.parent)
    if root is None:
        cat = work / f"impl{len(staged_roots)}"
        root = cat / "impl"
        root.mkdir(parents=True)
        for sib in op.parent.iterdir():
            if (sib / "op_kernel").is_dir():
                # the category folder as the source tree has it, one level up: an `#ifdef __CCE_KT_TEST__` include
                # (CPU-debug builds compile in the source tree) reaches `../../../<sibling>/op_kernel/x.h`
                (cat / sib.name).mkdir()
                (cat / sib.name / "op_kernel").symlink_to(sib / "op_kernel")
            if (sib / "op_kernel").is_dir():  # real folders, linked files: `..` must stay in the staging folder
                for f in (sib / "op_kernel").rglob("*"):
                    if f.is_file():
                        dst = root / sib.name / f.relative_to(sib / "op_kernel")
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        dst.symlink_to(f)
        shared = repo / "common" / "inc" / "op_kernel"
        if shared.is_dir() and not (root / "inc").exists():  # `<impl>/inc/`, as ops-nn's cmake/gen_ops_info.cmake:546
            (root / "inc").symlink_to(shared)                 # copies common/inc/op_kernel/* (`../inc/macro.h`)
        staged_roots[op.parent] = root
    return root / op.name / kernel.relative_to(op / "op_kernel")


def compile_one(kernel: Path, op: Path, common: Path, work: Path, idx: int, staged: Path, repo: Path,
                raw: bool) -> tuple[bool, str]:
    src, defs = translation_unit(kernel, op, staged, repo, raw, work, idx)
    tu = work / f"tu{idx}.cpp"
    tu.write_text(src)
    cmd = ["g++", "-fsyntax-only", "-w", *emulator.cflags(), f"-I{op / 'op_kernel'}", f"-I{op / 'op_host'}",
           f"-I{common}", *defs, str(tu)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, "" if r.returncode == 0 else cause(r.stderr)


def survey(repo: Path, opbase: Path, jobs: int, listing: bool, raw: bool, keep=None) -> dict:
    with tempfile.TemporaryDirectory(prefix="opkit-inplace-") as tmp:
        work = Path(tmp)
        common = stage_common(opbase.resolve(), work, repo)
        todo, skipped, roots = [], Counter(), {}
        for op in ops_of(repo):
            files, sk = entries(op)
            skipped.update(sk)
            if keep is not None:
                files = [f for f in files if keep(str(f.relative_to(repo)))]
            todo += [(f, op, stage(op, f, work, roots, repo)) for f in files]
        if not raw:
            tiling_view.kernel_view(None, [], [repo])  # index the repository's registrations once
        with ThreadPoolExecutor(jobs) as ex:
            res = list(ex.map(lambda a: compile_one(a[1][0], a[1][1], common, work, a[0], a[1][2], repo, raw),
                              enumerate(todo)))
    ok = sum(r[0] for r in res)
    causes = Counter(r[1] for r in res if not r[0])
    if listing:
        for (f, _, _), (good, why) in zip(todo, res):
            print(f"{'ok  ' if good else 'FAIL'} {f.relative_to(repo)}{'' if good else '  -- ' + why}")
    return {"repo": str(repo), "files": len(todo), "compile": ok, "skipped": dict(skipped),
            "causes": causes.most_common(), "failed": [str(f.relative_to(repo)) for (f, _, _), r in zip(todo, res) if not r[0]]}


def _commit(repo: Path) -> str:
    r = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "(not a git checkout)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--opbase", type=Path, required=True)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--list", action="store_true", help="one line per file")
    ap.add_argument("--top", type=int, default=15, help="causes shown per repository")
    ap.add_argument("--only", type=re.compile, metavar="REGEX",
                    help="only the entries whose path relative to the repository matches (re.search)")
    ap.add_argument("--failed-from", type=Path, metavar="JSON",
                    help="only the entries an earlier run's --json lists as failing")
    ap.add_argument("--raw-tiling-headers", action="store_true",
                    help="include the op_host tiling headers as they are instead of the kernel's view of them")
    a = ap.parse_args()
    failed = None
    if a.failed_from:
        failed = {Path(r["repo"]).name: set(r["failed"]) for r in json.loads(a.failed_from.read_text())}
    out = []
    for repo in a.repos:
        repo = repo.resolve()
        keep = None
        if a.only or failed is not None:
            prev = None if failed is None else failed.get(repo.name, set())
            keep = lambda rel, prev=prev: (a.only is None or a.only.search(rel)) and (prev is None or rel in prev)
        s = survey(repo, a.opbase, a.jobs, a.list, a.raw_tiling_headers, keep)
        s["commit"] = _commit(repo)
        out.append(s)
        pct = 100 * s["compile"] / s["files"] if s["files"] else 0
        subset = " (subset: --only / --failed-from)" if keep else ""
        print(f"{repo.name} {s['commit']}{subset}: {s['compile']} / {s['files']} A2 vector entries compile ({pct:.0f} %); "
              f"skipped {sum(s['skipped'].values())}: " + ", ".join(f"{k} {v}" for k, v in s["skipped"].items()))
        for c, n in s["causes"][:a.top]:
            print(f"  {n:4d}  {c}")
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
