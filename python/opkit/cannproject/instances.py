"""A templated kernel entry's instances: the template arguments its tiling keys select, as C++ template arguments.

An ops-math / ops-nn kernel entry is `template <...> __global__ __aicore__ void op(...)`; CANN's build compiles one
kernel per combination the op's `ASCENDC_TPL_SEL` selects out of its `ASCENDC_TPL_ARGS_DECL` (mirror-cann/asc-devkit
include/utils/tiling/template_argument.h). A `ASCENDC_TPL_DATATYPE_DECL` / `ASCENDC_TPL_DTYPE_DECL` parameter is
a ge::DataType number; where the entry declares it `typename` (ops-math asin_grad.cpp: `template <typename D_T,
int BUFFER_MODE>`) the kernel gets the C++ type of that dtype (`float`, `half`, `bfloat16_t`), where it declares
it a value (`int D_T_X`) the number. A `bool` parameter gets true/false.

`tables(project, work)` reads the tables without the op's host code: a tiny runner (runtime/runner.cpp) linked
with one source that includes each op_kernel header declaring `ASCENDC_TPL_ARGS_DECL`, so a kernel's instances
are known even when its op_host sources do not compile.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
from pathlib import Path

from ..emulator import host_include_dir
from ..errors import OpkitError
from . import dtypes
from .layout import Project

HERE = Path(__file__).resolve().parent
TPL_DTYPE, TPL_BOOL = 0, 3
_TPL_HEADER = re.compile(r"\bASCENDC_TPL_ARGS_DECL\s*\(")


def tpl_headers(project: Project) -> list[Path]:
    """op_kernel headers (A2: not under archNN other than the op's A2 folder) that declare the template args."""
    keep = project.a2_tiling_dir()
    out = []
    for h in sorted(project.op_kernel.rglob("*.h")):
        parts = h.relative_to(project.op_kernel).parts[:-1]
        if any(re.fullmatch(r"arch\d+", d) and d != keep for d in parts):
            continue
        if _TPL_HEADER.search(h.read_text(errors="replace")):
            out.append(h)
    return out


def _included(kernel: Path, root: Path) -> list[Path]:
    """The files under `root` the kernel file includes, transitively, in include order (quoted includes resolved
    beside the including file, then from `root`)."""
    out, todo = [], [kernel]
    while todo:
        f = todo.pop(0)
        for name in re.findall(r'#\s*include\s*"([^"]+)"', f.read_text(errors="replace")):
            for cand in (f.parent / name, root / name):
                c = cand.resolve()
                if c.is_file() and c not in out and root.resolve() in c.parents:
                    out.append(c)
                    todo.append(c)
                    break
    return out


def tables(project: Project, work: Path, kernel: Path | None = None) -> dict | None:
    """{"decl": [...], "sel": [[...], ...]} as the host runner reports them, or None (no ASCENDC_TPL_ARGS_DECL).
    The table is the one the kernel file reaches by its includes (an op_kernel may hold other ops' or other
    chips' tables), else the first header declaring one."""
    headers = tpl_headers(project)
    if not headers:
        return None
    if kernel is not None:
        reached = _included(kernel, project.op_kernel)
        headers.sort(key=lambda h: reached.index(h.resolve()) if h.resolve() in reached else len(reached))
    src = '#include "ascendc/host_api/tiling/template_argument.h"\n' + "".join(
        f'#include "{h}"\n' for h in headers[:1])   # one op, one declaration table (the runner keeps one)
    flags = ["-std=c++17", "-O0", "-g0", "-w", f"-I{HERE / 'include'}", f"-I{host_include_dir()}",
             *(f"-I{d}" for d in project.libs.host_include), f"-I{project.op_kernel}", f"-I{project.root}"]
    digest = hashlib.sha256((src + " ".join(flags)).encode() + (HERE / "runtime" / "runner.cpp").read_bytes()
                            + b"".join(h.read_bytes() for h in headers[:1])).hexdigest()[:16]
    work.mkdir(parents=True, exist_ok=True)
    exe = work / f"tpl_runner_{digest}"
    if not exe.exists():
        tu = work / f"tpl_{digest}.cpp"
        tu.write_text(src)
        r = subprocess.run(["g++", *flags, str(HERE / "runtime" / "runner.cpp"), str(tu), "-o", str(exe)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            errs = [ln for ln in r.stderr.splitlines() if "error" in ln][:4]
            raise OpkitError(f"{headers[0]}: the template-argument declarations do not compile on the host:\n  "
                             + "\n  ".join(errs))
    r = subprocess.run([str(exe)], input="describe\n", capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout.splitlines()[0])["tpl"]


def selected(tpl: dict) -> list[tuple[int, ...]]:
    """Every template-argument combination ASCENDC_TPL_SEL selects, in declaration order."""
    names = [p["name"] for p in tpl["decl"]]
    out = []
    for sel in tpl["sel"] or []:
        by = {p["name"]: p["vals"] for p in sel}
        lists = [by.get(n, d["vals"]) for n, d in zip(names, tpl["decl"])]
        for combo in itertools.product(*lists):
            if combo not in out:
                out.append(combo)
    return out


def param_kinds(kernel: Path, entry: str) -> list[str]:
    """'type' or 'value' per template parameter of the entry (`template <typename D_T, int MODE>` -> type, value)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", kernel.read_text(errors="replace"), flags=re.S)
    m = None
    for m in re.finditer(r"template\s*<([^;{]*?)>\s*(?:extern\s+\"C\"\s*)?__global__\s+__aicore__\s+void\s+"
                         + re.escape(entry) + r"\s*\(", text):
        pass
    if m is None:
        return []
    return ["type" if re.match(r"\s*(typename|class)\b", p) else "value" for p in m.group(1).split(",")]


def entry_expr(entry: str, tpl: dict, kinds: list[str], args: tuple[int, ...]) -> str:
    """`entry<float, 1>`: the instance the kernel is built for."""
    lits = []
    for i, (a, p) in enumerate(zip(args, tpl["decl"])):
        kind = kinds[i] if i < len(kinds) else "value"
        if kind == "type":
            if p["type"] != TPL_DTYPE:
                raise OpkitError(f"{entry}: template parameter {i} is a type but {p['name']} is not a "
                                 "ASCENDC_TPL_DATATYPE_DECL / DTYPE_DECL parameter")
            lits.append(dtypes.cxx(a))
        elif p["type"] == TPL_BOOL:
            lits.append("true" if a else "false")
        else:
            lits.append(str(a))
    return f"{entry}<{', '.join(lits)}>"
