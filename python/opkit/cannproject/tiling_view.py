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

    python -m opkit.cannproject.tiling_view OpType op_host/foo_tiling.h [--index REPO] > foo_kernel_tiling.h
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

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
    """The namespace-scope tiling items of one header, in order."""
    text = _strip(path.read_text(errors="replace"))
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


def kernel_view(op_type: str | None, own_headers: list[Path], index_roots: list[Path] = ()) -> str:
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
    for it in const_items + order + [r for r in regs if r.cls in seen and r.cls not in missing_structs]:
        opened = "".join(f"namespace {n} {{ " for n in it.ns)
        closed = " }" * len(it.ns)
        body = rewritten.get(id(it), it.text)
        if body.lstrip().startswith("#"):
            lines.append(f"#ifndef {it.name}\n{body}\n#endif")
        else:
            lines.append(f"{opened}\n{body}\n{closed}" if it.ns else body)
    return "\n".join(lines) + "\n"


def view_for(op_type: str, own_header: Path | None, index_root: Path) -> str | None:
    """The kernel view of an op: from its own tiling header, else from a registration of the op type elsewhere in
    its repository (ops-math CircularPadGrad is registered in conversion/circular_pad/op_host/
    circular_pad_common_tiling.h); None when neither exists (the kernel holds its own struct)."""
    text = kernel_view(op_type, [own_header] if own_header else [], [index_root])
    if own_header is not None or re.search(r"REGISTER_TILING_DATA_CLASS\s*\(\s*" + re.escape(op_type) + r"\s*,", text):
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
