"""The kernel's view of an op's tiling data: the header CANN's build generates for a kernel from its op_host code.

CANN never compiles an op_host tiling header with the kernel. Its build runs the host side, reads the classes the
op registered (BEGIN_TILING_DATA_DEF ... END_TILING_DATA_DEF, REGISTER_TILING_DATA_CLASS(OpType, Class)) and writes
a header with just those structs for the kernel (mirror-cann/asc-devkit tools/build/asc_op_compile_base/adapter/
get_op_tiling.py; hicann/metadef inc/external/register/tilingdata_base.h). The host headers a tiling header also
includes (register/op_impl_registry.h, log/log.h, op_host/tiling_base.h, ...) and its host classes never reach the
kernel.

`kernel_view(op_type, own_headers, index_roots)` writes that header from the sources, without compiling the host
side: the tiling-data blocks of the op's own op_host tiling headers, every block a registration names for the op
type anywhere under `index_roots` (ops-nn's foreach family registers 40 op types on one shared
`ForeachCommonTilingData` in foreach_utils/op_host/foreach_tiling_def.h), the nested structs they use, and the
namespace-scope constants their array sizes name -- each in its namespace, in dependency order. The kernel side of
the macros is the emulator's register/tilingdata_base.h (CANN's host byte layout).

Two more rules of CANN's build (mirror-cann/asc-devkit 82b89a15, tools/build/asc_op_compile_base/asc_op_compiler/):
- a kernel that names its own struct (REGISTER_TILING_DEFAULT, REGISTER_NONE_TILING; the user-defined tiling style)
  gets no registered class at all: kernel_info_infer.py:139-164 finds the marker these leave in the preprocessed
  kernel (`__enable_custom_tiling`, impl/basic_api/utils/kernel_utils_macros.h:364-386), get_op_tiling.py:2316-2324
  then takes get_tiling_info_v2, whose header (gen_dynamic_shape_v2, :1588-1622) is kernel_tiling.h and the copy
  helpers for the kernel's own struct -- `custom_view()`;
- the registrations are those of the host library, compiled from the op_host sources with what they include: an
  op_kernel/ header that op_host includes (`#include "../op_kernel/is_neg_inf_tiling_data.h"`, ops-math
  experimental/math/is_neg_inf) registers the op's struct as well as an op_host one -- `host_kernel_headers()`. Such
  a header is included by the view as it is (its guard keeps a kernel that includes it too from redefining it).

    python -m opkit.cannproject.tiling_view OpType op_host/foo_tiling.h [--index REPO] > foo_kernel_tiling.h
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..emulator.branches import emulator_branch

_TOKEN = re.compile(
    r"(?P<def>\bBEGIN_TILING_DATA_DEF\s*\(\s*(?P<dname>\w+)\s*\)(?P<body>.*?)\bEND_TILING_DATA_DEF\s*;?)"
    r"|(?P<reg>\bREGISTER_TILING_DATA_CLASS\s*\(\s*(?P<rop>\w+)\s*,\s*(?P<rcls>\w+)\s*\)\s*;?)"
    r"|(?P<ns>\bnamespace\s+(?P<nsname>[\w:]+)\s*\{)"
    r"|(?P<const>^[ \t]*(?:static\s+|inline\s+)*(?:constexpr|const)\s+(?:unsigned\s+)?[\w:]+\s+(?P<cname>\w+)\s*=\s*[^;{}]+;)"
    r"|(?P<define>^[ \t]*#[ \t]*define[ \t]+(?P<mname>\w+)[ \t]+[^\n]+)"
    r"|(?P<open>\{)|(?P<close>\})",
    re.S | re.M)
_ARR = re.compile(r"TILING_DATA_FIELD_DEF_ARR\s*\(\s*[\w:\s]+?,\s*([^,]+?),\s*\w+\s*\)")
_STRUCT = re.compile(r"TILING_DATA_FIELD_DEF_STRUCT\s*\(\s*([\w:]+)\s*,")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_INT_VALUE = re.compile(r"(?:=|define\s+\w+)\s*\(?\s*(\d+)\s*[uUlL]*\s*\)?\s*;?\s*$")
_ARR_SIZE = re.compile(r"(TILING_DATA_FIELD_DEF_ARR\s*\(\s*[\w:\s]+?,\s*)(\w+)(\s*,)")


@dataclass
class Item:
    kind: str                 # def | reg | const
    ns: tuple[str, ...]
    text: str
    name: str                 # class (def, reg), constant name (const), op type (reg: rop)
    cls: str = ""             # reg: the class it registers
    uses: set[str] = field(default_factory=set)     # def: identifiers in array sizes
    structs: set[str] = field(default_factory=set)  # def: nested struct types
    src: str = ""


def _strip(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


@lru_cache(maxsize=None)
def scan(path: Path) -> tuple[Item, ...]:
    """The namespace-scope tiling items of one header, in order. `#if 0` blocks are left out (the host compiler CANN's
    build reads the registration with never sees them); a condition on any macro keeps every branch."""
    text = emulator_branch(_strip(path.read_text(errors="replace")), macros={})
    stack: list[str | None] = []
    out = []
    for m in _TOKEN.finditer(text):
        at_ns = all(s is not None for s in stack)
        ns = tuple(s for s in stack if s)
        if m.group("ns"):
            stack.append(m.group("nsname"))
        elif m.group("open"):
            stack.append(None)
        elif m.group("close"):
            if stack:
                stack.pop()
        elif not at_ns:
            continue
        elif m.group("def"):
            body = m.group("body")
            uses = {i for a in _ARR.findall(body) for i in _IDENT.findall(a)}
            structs = {s.split("::")[-1] for s in _STRUCT.findall(body)}
            out.append(Item("def", ns, m.group("def"), m.group("dname"), uses=uses, structs=structs, src=str(path)))
        elif m.group("reg"):
            out.append(Item("reg", ns, m.group("reg"), m.group("rop"), cls=m.group("rcls"), src=str(path)))
        elif m.group("const"):
            out.append(Item("const", ns, m.group("const").strip(), m.group("cname"), src=str(path)))
        elif m.group("define"):
            out.append(Item("const", (), m.group("define").strip(), m.group("mname"), src=str(path)))
    return tuple(out)


@lru_cache(maxsize=None)
def _index(roots: tuple[Path, ...]) -> tuple[Item, ...]:
    items = []
    for root in roots:
        for h in sorted(root.rglob("*.h")):
            parts = set(h.parts)
            if "arch35" in parts or "tests" in parts or "op_kernel" in parts:
                continue
            try:
                if "TILING_DATA" not in h.read_text(errors="replace"):
                    continue
            except OSError:
                continue
            items += scan(h)
    return tuple(items)


_CUSTOM = re.compile(r"\b(?:REGISTER_TILING_DEFAULT\s*\(|REGISTER_NONE_TILING\b)")
_HOST_INC = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]*\bop_kernel/[^"]+)"', re.M)
_GUARD = re.compile(r"^[ \t]*#[ \t]*(?:pragma[ \t]+once|ifndef[ \t]+\w+)", re.M)


def kernel_text(kernel: Path) -> str:
    """A kernel source as the emulator compiles it, with the op_kernel headers it includes by a quoted path beside it
    (one level: ops-nn sync_batch_norm_gather_stats writes REGISTER_TILING_DEFAULT in a macro of its base header):
    comments stripped, the `#if`s on the emulator's flags decided (an Ascend 950 branch does not count)."""
    kernel = Path(kernel)
    text = emulator_branch(_strip(kernel.read_text(errors="replace")))
    out = [text]
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        h = kernel.parent / inc
        if h.is_file() and "arch35" not in h.parts:
            out.append(emulator_branch(_strip(h.read_text(errors="replace"))))
    return "\n".join(out)


def registers_own_struct(kernel_text: str) -> bool:
    """The kernel names its own tiling struct (REGISTER_TILING_DEFAULT / REGISTER_NONE_TILING): CANN's build then
    gives it no registered class (module docstring). The caller passes the text its `#if`s leave (kernel_text)."""
    return bool(_CUSTOM.search(_strip(kernel_text)))


def custom_view() -> str:
    """What CANN's build gives a kernel with its own struct: kernel_tiling.h (get_op_tiling.py:1592), nothing more;
    the copy helpers are the emulator's GET_TILING_DATA_WITH_STRUCT (opkit_emu/tiling_macros.h)."""
    return "\n".join(["// generated by opkit.cannproject.tiling_view: the kernel registers its own tiling struct",
                      "// (REGISTER_TILING_DEFAULT), so CANN's build gives it no registered class; do not edit",
                      "#pragma once", '#include "kernel_tiling/kernel_tiling.h"']) + "\n"


def host_kernel_headers(op_host: Path) -> list[Path]:
    """The op_kernel/ headers the op's op_host sources include that hold tiling registrations (BEGIN_TILING_DATA_DEF):
    the host library CANN's build reads the registrations from is compiled with them. Paths resolve from the including
    file, as the host compile's `#include "..."` does (ops-math is_neg_inf: `../op_kernel/is_neg_inf_tiling_data.h`)."""
    op_host = Path(op_host)
    out: list[Path] = []
    if not op_host.is_dir():
        return out
    for src in sorted(p for p in op_host.rglob("*") if p.suffix in (".cpp", ".h", ".cc") and "arch35" not in p.parts):
        for inc in _HOST_INC.findall(_strip(src.read_text(errors="replace"))):
            h = (src.parent / inc).resolve()
            if h.is_file() and h not in out and "BEGIN_TILING_DATA_DEF" in h.read_text(errors="replace"):
                out.append(h)
    return out


def kernel_structs(kernel_text: str) -> set[str]:
    """The structs a kernel defines itself in the branch it is compiled with (the caller decides its `#if`s): ops-nn
    chamfer_distance_grad defines ChamferDistanceGradTilingData under `__CCE_KT_TEST__`, the CPU-debug build, where
    CANN's kernel UT gives it none of the registered class (op_kernel/chamfer_distance_grad.h:22-32)."""
    return set(re.findall(r"\bstruct\s+(\w+)\s*(?::[^{;]*)?\{", _strip(kernel_text)))


def kernel_view(op_type: str | None, own_headers: list[Path], index_roots: list[Path] = (),
                kernel_defines: set[str] = frozenset()) -> str:
    """kernel_defines: structs the kernel defines itself (kernel_structs): left out with their registrations, so
    the kernel's own definition is the only one (else `reference to X is ambiguous` through `using namespace
    optiling`)."""
    # an op_kernel/ header (host_kernel_headers) is included whole, not copied: the kernel may include it as well
    included = [Path(h) for h in own_headers if "op_kernel" in Path(h).parts
                and _GUARD.search(Path(h).read_text(errors="replace"))]
    inc_src = {str(h) for h in included}
    own = [it for h in own_headers for it in scan(Path(h))]
    pool = list(own) + [it for it in _index(tuple(Path(r).resolve() for r in index_roots)) if it not in own]
    defs: dict[str, Item] = {}
    for it in pool:  # the op's own headers first, then the index
        if it.kind == "def":
            defs.setdefault(it.name, it)
    consts: dict[str, Item] = {}
    for it in pool:
        if it.kind == "const":
            consts.setdefault(it.name, it)
    regs = [it for it in own if it.kind == "reg"]
    regs += [it for it in pool if it.kind == "reg" and op_type and it.name == op_type and it not in regs]
    wanted = [it.name for it in own if it.kind == "def"] + [r.cls for r in regs]
    order: list[Item] = []
    seen: set[str] = set()
    missing_structs: set[str] = set()

    def need(cls: str):
        if cls in seen:
            return
        seen.add(cls)
        d = defs.get(cls)
        if d is None:
            missing_structs.add(cls)
            return
        for s in sorted(d.structs):
            need(s)
        order.append(d)

    seen |= set(kernel_defines)
    for c in wanted:
        need(c)
    const_items: list[Item] = []
    by_file: dict[tuple[str, str], Item] = {}
    for it in pool:
        if it.kind == "const":
            by_file.setdefault((it.src, it.name), it)
    # CANN's generated header writes an array's size as a number (get_op_tiling.py evaluates it): a constant
    # whose value is an integer literal is substituted, so the view declares no name the kernel may declare too
    # (ops-math StridedSliceAssignV2: MAX_DIM_NUM in both the tiling header and the kernel -> ambiguous).
    rewritten: dict[int, str] = {}
    sourced: list[Item] = []   # substituted constants: kept for the reader in a namespace nothing nominates
    for d in order:  # a constant from the block's own file first (ops-nn defines MAX_CORE_CONT in several)
        text = d.text
        for u in sorted(d.uses):
            c = by_file.get((d.src, u)) or consts.get(u)
            if c is None:
                continue
            lit = _INT_VALUE.search(c.text)
            if lit:
                text = _ARR_SIZE.sub(lambda m: m.group(0) if m.group(2) != u else f"{m.group(1)}{lit.group(1)}{m.group(3)}",
                                     text)
                if c.name not in {x.name for x in sourced} and not c.text.lstrip().startswith("#"):
                    sourced.append(c)
            elif c not in const_items:
                const_items.append(c)
        rewritten[id(d)] = text
    lines = ["// generated by opkit.cannproject.tiling_view: the kernel's view of the op's tiling data (what CANN's",
             "// build generates from the op_host registrations); do not edit", "#pragma once",
             '#include "register/tilingdata_base.h"']
    if missing_structs:  # advanced-API structs (SoftMaxTiling, TCubeTiling, ...): the kernel_tiling header has them
        lines.append('#include "kernel_tiling/kernel_tiling.h"')
    for c in sourced:
        lines.append(f"namespace opkit_tiling_view_source {{ {c.text} }}  // the size's origin (substituted above)")
    lines += [f'#include "{h}"' for h in included]
    for it in const_items + order + [r for r in regs if r.cls in seen and r.cls not in missing_structs
                                            and r.cls not in kernel_defines]:
        if it.src in inc_src:
            continue
        opened = "".join(f"namespace {n} {{ " for n in it.ns)
        closed = " }" * len(it.ns)
        body = rewritten.get(id(it), it.text)
        if body.lstrip().startswith("#"):
            lines.append(f"#ifndef {it.name}\n{body}\n#endif")
        else:
            lines.append(f"{opened}\n{body}\n{closed}" if it.ns else body)
    return "\n".join(lines) + "\n"


def view_for(op_type: str, own_header: Path | None, index_root: Path, kernel: Path | None = None) -> str | None:
    """The kernel view of an op: from its own tiling header (and the op_kernel/ headers its op_host includes, given
    the kernel's path), else from a registration of the op type elsewhere in its repository (ops-math CircularPadGrad
    is registered in conversion/circular_pad/op_host/circular_pad_common_tiling.h); None when neither exists (the
    kernel holds its own struct); `custom_view()` for a kernel that registers its own struct."""
    seen = kernel_text(kernel) if kernel is not None else ""
    if registers_own_struct(seen):
        return custom_view()
    own = [own_header] if own_header else []
    if kernel is not None:
        op_kernel = next((p for p in Path(kernel).parents if p.name == "op_kernel"), None)
        own += host_kernel_headers(op_kernel.parent / "op_host") if op_kernel else []
    text = kernel_view(op_type, own, [index_root], kernel_structs(seen))
    if own or re.search(r"REGISTER_TILING_DATA_CLASS\s*\(\s*" + re.escape(op_type) + r"\s*,", text):
        return text
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("op_type")
    ap.add_argument("headers", nargs="+", type=Path)
    ap.add_argument("--index", type=Path, action="append", default=[],
                    help="a repository whose op_host headers may hold the op's registration (repeatable)")
    a = ap.parse_args(argv)
    sys.stdout.write(kernel_view(a.op_type, a.headers, a.index))
    return 0


if __name__ == "__main__":
    sys.exit(main())
