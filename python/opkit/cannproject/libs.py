"""CANN's shared operator libraries, on the paths CANN's build gives an ops-math / ops-nn op (docs/cann.md).

An op folder of hicann/ops-math or hicann/ops-nn is not self-contained: its op_host code includes opbase's host
library (`log/log.h`, `op_host/tiling_base_util.h`, `util/math_util.h`, `op_host/util/platform_util.h`, ...) and its
repository's `common/inc` (`op_host/math_tiling_templates_registry.h`, ...), and its kernel includes opbase's kernel
library (`atvoss/...`, `op_kernel/platform_util.h`, `op_kernel/math_util.h`). CANN's build puts them on the path:

- host: ops-math@c419332 cmake/variables.cmake:166-175 (OP_TILING_INCLUDE: the toolkit's headers -- here opkit's
  stand-ins, include/ -- then OPBASE_INC_DIRS, the repository root, `common/inc`), with OPBASE_INC_DIRS =
  opbase `include`, `include/op_common`, `include/op_common/op_host` and the same three under `pkg_inc`
  (cmake/modules/FindOPBASE.cmake:41-47); opbase's host sources are linked in (cmake/func.cmake:34-48).
- kernel: opbase `pkg_inc/op_common/atvoss` and `include/op_common/op_kernel` are copied into the kernel's
  `common` folder (cmake/gen_ops_info.cmake:47-49), so `#include "atvoss/..."` and `"op_kernel/..."` resolve.

Where opbase is: `--opbase DIR` / OPKIT_CANN_OPBASE, else a sibling checkout of the repository named `opbase` or
`ops-base` (FindOPBASE.cmake:22 looks in ${TOP_DIR}/ops-base). opkit's own stand-ins come first on the host path:
`log/log.h` is ours (python/opkit/cannproject/include/opkit_cann/log.h), as the toolkit's dlog is not available.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OpkitError

ENV = "OPKIT_CANN_OPBASE"
# the kernel view of CANN's host headers (kernel_include/opkit_cann_kernel_view.h): an op_kernel/<op>_tiling.h may
# include register/op_impl_registry.h itself (ops-math experimental/math/real), which CANN's kernel build resolves
KERNEL_VIEW = Path(__file__).resolve().parent / "kernel_include"
# opbase's host library sources CANN links into an op's tiling library (func.cmake:34-48); the atvoss tiling
# sources are the Ascend 950 (RegBase) auto-schedulers and need CANN's view-stride API, which the stand-in lacks.
_OPBASE_HOST_SOURCES = ("src/op_common/op_host/*.cpp", "src/op_common/op_host/util/*.cpp")


@dataclass
class Libraries:
    repo: Path | None = None        # the ops-math / ops-nn checkout the op belongs to
    opbase: Path | None = None
    host_include: list[Path] = field(default_factory=list)
    host_sources: list[Path] = field(default_factory=list)
    kernel_include: list[Path] = field(default_factory=lambda: [KERNEL_VIEW])

    def as_yaml(self) -> dict:
        return {k: str(v) for k, v in (("repo", self.repo), ("opbase", self.opbase)) if v is not None}


def repo_of(op_root: Path) -> Path | None:
    """The CANN operator repository an op folder belongs to: the nearest ancestor with `common/inc` and `cmake/`."""
    for p in Path(op_root).resolve().parents:
        if (p / "common" / "inc").is_dir() and (p / "cmake").is_dir():
            return p
    return None


def _is_opbase(p: Path) -> bool:
    return (p / "include" / "op_common" / "op_host" / "util" / "opbase_export.h").is_file()


def find_opbase(repo: Path | None, given: str | Path | None = None) -> Path | None:
    cand = given or os.environ.get(ENV)
    if cand:
        p = Path(cand).resolve()
        if not _is_opbase(p):
            raise OpkitError(f"{p}: not an opbase checkout (no include/op_common/op_host/util/opbase_export.h); "
                             f"give hicann/opbase's folder with --opbase or {ENV}")
        return p
    if repo is not None:
        for name in ("opbase", "ops-base"):
            p = repo.parent / name
            if _is_opbase(p):
                return p.resolve()
    return None


def libraries(op_root: Path, opbase: str | Path | None = None, repo: str | Path | None = None) -> Libraries:
    """The include folders and sources CANN's build gives the op at `op_root` (empty for a standalone project)."""
    repo_p = Path(repo).resolve() if repo else repo_of(op_root)
    ob = find_opbase(repo_p, opbase)
    libs = Libraries(repo=repo_p, opbase=ob)
    if ob is not None:
        for base in (ob / "include", ob / "pkg_inc"):
            libs.host_include += [base, base / "op_common", base / "op_common" / "op_host"]
        libs.host_sources = sorted(s for pat in _OPBASE_HOST_SOURCES for s in ob.glob(pat))
        libs.kernel_include = [ob / "pkg_inc" / "op_common", ob / "include" / "op_common", KERNEL_VIEW]
    if repo_p is not None:   # ops-nn also has common/inc/op_host (ops-nn@e5c3fa93 cmake/variables.cmake:181-193)
        libs.host_include += [p for p in (repo_p, repo_p / "common" / "inc", repo_p / "common" / "inc" / "op_host")
                              if p.is_dir()]
    return libs


_SIBLING = re.compile(r'#\s*include\s*"\.\./([\w.-]+)/')


def _sibling_kernel(name: str, op_root: Path, repo: Path | None) -> Path | None:
    """The op_kernel folder of the op folder `name`: beside the op first, else anywhere in its repository (op
    folders sit at <repo>/<category>/<op> or <repo>/experimental/<category>/<op>)."""
    near = op_root.parent / name / "op_kernel"
    if near.is_dir():
        return near
    if repo is not None:
        for pat in (f"*/{name}/op_kernel", f"*/*/{name}/op_kernel"):
            hit = sorted(p for p in repo.glob(pat) if p.is_dir())
            if hit:
                return hit[0]
    return None


def staged_siblings(op_root: Path, op_kernel: Path, repo: Path | None, work: Path) -> list[Path]:
    """Include folders that resolve a kernel's `#include "../<other_op>/x.h"` as CANN's build does: it copies every
    op's op_kernel/ into one folder, each under its op folder's name (ops-math@c4193324 cmake/gen_ops_info.cmake:
    14-33, kernel_src_copy), so `../diag_flat/x.h` from diag_v2's kernel is diag_flat's op_kernel/x.h. Here:
    `work/ascendc/<other_op>` links to that op's op_kernel/ (found transitively), and `work/ascendc/.self`, a
    real folder, goes on the include path, where g++ tries `.self/../diag_flat/x.h`. [] when nothing reaches out."""
    stage = work / "ascendc"
    todo, seen, linked = [op_kernel], set(), False
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        for f in d.rglob("*"):
            if f.suffix not in (".h", ".hpp", ".cpp", ".inl") or not f.is_file():
                continue
            for name in set(_SIBLING.findall(f.read_text(errors="replace"))):
                target = _sibling_kernel(name, op_root, repo)
                if target is None:
                    continue           # g++ names the missing header
                link = stage / name
                stage.mkdir(parents=True, exist_ok=True)
                if not link.is_symlink():
                    link.symlink_to(target.resolve(), target_is_directory=True)
                linked = True
                todo.append(target)
    if not linked:
        return []
    (stage / ".self").mkdir(parents=True, exist_ok=True)
    return [stage / ".self"]


def kernel_flags(opbase: str | Path | None = None) -> list[str]:
    """`opkit cflags --cann`: the kernel view of the host headers an op_host tiling header includes
    (kernel_include/opkit_cann_kernel_view.h; after the emulator's own folders, which keep their headers), and
    opbase's kernel library as CANN's kernel build places it (gen_ops_info.cmake:47-49)."""
    flags = [f"-I{KERNEL_VIEW}"]
    ob = find_opbase(None, opbase)
    if ob is not None:
        # kernel library (atvoss/, op_kernel/), then opbase's host util folder: util/math_util.h is plain C++ that
        # tiling headers include (a header reaching its gert-based siblings fails naming the incomplete type)
        flags += [f"-I{ob / 'pkg_inc' / 'op_common'}", f"-I{ob / 'include' / 'op_common'}",
                  f"-I{ob / 'include' / 'op_common' / 'op_host'}"]
    return flags
