"""The AscendC API inventory: every public name of CANN's kernel API, checked against the emulator.

Run on demand with a local copy of CANN's public asc-devkit repository (never vendored here):

    python -m opkit.emulator.inventory --asc-devkit PATH [--sources DIR ...] [--write-docs] [--list]

It reads the public headers (`include/basic_api/*.h` and the few `impl/` headers whose names CANN's own
kernels use), resolves their preprocessor conditionals for the chip (`g++ -E`, __NPU_ARCH__ 2201 = A2),
lists every declaration in `namespace AscendC` and at global scope (functions with each overload, classes
with their public members, enums with their values, constants) and every public macro, and checks each
against the emulator by compiling one probe per name or overload against `kernel_operator.h`:

- implemented: the probe compiles (an overload counts when a call with CANN's parameter types resolves);
- documented difference: implemented, and docs/emulator.md says how it differs (`DIFFERENCES` below);
- rejected: the emulator declares it in `opkit_emu/unsupported.h`, so using it stops the build with
  "not supported on the emulator: NAME (see docs/emulator.md)";
- missing: none of the above.

`--sources` also reads local copies of CANN's own sample and op repositories and counts, for each name, the
kernels that use it (inventory/usage.py), so the table says how many of the names CANN's kernels use are
implemented. `--write-docs` replaces the table between the inventory markers of docs/emulator.md.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .. import cflags, include_dir

# Public headers read (relative to the asc-devkit root). kernel_operator.h includes all of include/basic_api
# except the register-based `reg_compute/` API (arch 3510 only); the impl/ headers hold names CANN's public
# headers expose to kernels (Hardware, AscendCUtils, the kernel-side macros).
HEADER_GLOBS = ("include/basic_api/*.h", "include/basic_api/core_mng/roc/*.h", "include/utils/base/*.h")
EXTRA_HEADERS = ("impl/utils/common_types.h", "impl/basic_api/kernel_utils_base.h", "impl/basic_api/kernel_macros.h",
                 "impl/basic_api/kernel_log.h", "impl/utils/sys_macros.h")
# impl/ headers are internal (CANN's own #pragma message says so); of them, only the names CANN's public
# headers and docs hand to kernels are inventoried.
IMPL_PUBLIC = {"Hardware", "ReduceType", "AscendCUtils", "ASSERT", "ASCENDC_ASSERT", "KERNEL_LOG", "LogLevel",
               "ASCEND_IS_AIV", "ASCEND_IS_AIC", "ASCEND_IS_NOT_AIV", "ASCEND_IS_NOT_AIC", "int4b_t"}
ARCH_DEFINES = ("-D__NPU_ARCH__=2201", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_AICORE__=220", "-D__CCE_KT_TEST__=1")

# Names that are implemented but behave differently from CANN, with the section of docs/emulator.md saying how.
DIFFERENCES = {
    "GetReduceMaxMinCount": "the value-only form is a compile error (CANN: not supported on A2)",
    "GetReduceRepeatMaxMinSpr": "the value-only form is a compile error (CANN: not supported on A2)",
    "FreeAllEvent": "no-op: the emulator's queue events come from no pool",
    "SetAtomicAdd": "atomic adds applied after all blocks, in block order (Numerics)",
    "DataCacheCleanAndInvalid": "no-op: the emulator has no data cache",
    "SetL2CacheHint": "no-op",
    "GetSubBlockIdx": "always 0: one vector core per block",
    "GetTaskRation": "always 1",
    "ASSERT": "a failed assertion is rule kernel-assert, not an abort",
    "ascendc_assert": "a failed assertion is rule kernel-assert, not an abort",
    "ASCENDC_ASSERT": "a failed assertion is rule kernel-assert, not an abort",
    "SyncAll": "the launch owns the barrier (SyncAll)",
    "CrossCoreSetFlag": "mode 0 between vector cores only; modes 1 and 2 are a compile error",
    "CrossCoreWaitFlag": "mode 0 between vector cores only; modes 1 and 2 are a compile error",
    "GetUserWorkspace": "returns the workspace itself (SyncAll)",
    "BinaryRepeatParams": "repeatStrideMode, strideSizeMode accepted and ignored",
    "UnaryRepeatParams": "repeatStrideMode, strideSizeMode, halfBlock accepted and ignored",
    "PRINTF": "host printf",
    "printf": "host printf",
    "DumpTensor": "prints the tensor's values on the host",
    "KERNEL_TASK_TYPE_DEFAULT": "no-op: the emulator runs vector cores",
    "KERNEL_TASK_TYPE": "no-op: the emulator runs vector cores",
    "Axpy": "computed in float, rounded once (Numerics)",
    "MulAddDst": "computed in float, rounded once (Numerics)",
    "FusedMulAdd": "computed in float, rounded once (Numerics)",
    "FusedMulAddRelu": "computed in float, rounded once (Numerics)",
    "MulAddRelu": "computed in float, rounded once (Numerics)",
    "GetSystemCycle": "the host's steady clock in ns",
    "LocalMemAllocator": "CANN's one-allocator-per-position CPU check is not made",
    "KERNEL_LOG": "prints block and AIV_0, not the process id",
    "GetProgramCounter": "the host's code address of the caller",
    "SetCtrlSpr": "CTRL[48] = 1 only (the non-saturating mode); 0 is rule not-emulated",
    "GetCtrlSpr": "always 1: CTRL[48], the non-saturating mode the emulator computes in",
    "int4b_t": "tensors: the A2 set (sizes / offsets, GetValue / SetValue, DataCopy, Cast with half, AscendAntiQuant); "
               "an odd view offset or SetSize is api-argument",
}

_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "static_assert", "alignof",
             "operator", "new", "delete", "throw", "catch", "noexcept", "alignas"}
_ATTR_TOKENS = {"__aicore__", "inline", "static", "constexpr", "__inout_pipe__", "__in_pipe__", "__out_pipe__",
                "extern", "__simd_callee__", "__simd_vf__", "__attribute__", "virtual", "explicit", "friend",
                "__host_aicore__", "__global__", "[[nodiscard]]", "__gm__", "__ubuf__"}


@dataclass
class Decl:
    kind: str                 # function | class | enum | value | constant | macro | member
    name: str                 # NAME, Enum::VALUE, Class::Member
    header: str
    scope: str = "AscendC"    # AscendC | global
    template: str = ""        # the template parameter list text, without "template <" ">"
    params: list[str] = field(default_factory=list)
    owner_template: str = ""  # for members of class templates
    form: str = ""            # level-0 (mask[]) | level-0 (mask) | level-2 (count) | ""

    @property
    def base(self) -> str:
        return self.name.split("::")[0]


# ---------------------------------------------------------------------------------------------- reading
def preprocess(path: Path) -> str:
    """The header's own text with its conditionals resolved for A2 (includes and pragmas dropped)."""
    text = path.read_text(errors="replace").replace("\\\n", " ")
    text = re.sub(r"^\s*#\s*(include|pragma|error|warning)\b.*$", "", text, flags=re.M)
    r = subprocess.run(["g++", "-E", "-P", "-x", "c++", "-std=c++17", *ARCH_DEFINES, "-"], input=text,
                       capture_output=True, text=True)
    return re.sub(r"^\s*#.*$", "", r.stdout, flags=re.M)  # pragmas g++ -E passes through


def public_macros(path: Path) -> list[str]:
    """#define'd names a kernel may use: not include guards, not reserved (leading underscore), not internal."""
    names = []
    for m in re.finditer(r"^\s*#\s*define\s+([A-Za-z_]\w*)", path.read_text(errors="replace"), flags=re.M):
        n = m.group(1)
        if n.startswith("_") or n.endswith(("_H", "_H_", "_INTERFACE_H", "_IMPL_H")) or "INTERNAL" in n:
            continue
        if n.startswith(("ASCENDC_MODULE_", "UNDEF_", "ASC_INTERNAL", "KERNEL_LOG_KERNEL_", "ASCC_")):
            continue
        names.append(n)
    return sorted(set(names))


_TOKEN = re.compile(r"""\s+|//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|::|->|[A-Za-z_]\w*|\d[\w.']*|.""",
                    re.S)


def tokens(text: str) -> list[str]:
    toks = [t for t in _TOKEN.findall(text) if t.strip() and not t.startswith(("//", "/*"))]
    out, i = [], 0
    while i < len(toks):  # drop [[attributes]]
        if toks[i] == "[" and i + 1 < len(toks) and toks[i + 1] == "[":
            depth = 0
            while i < len(toks):
                depth += {"[": 1, "]": -1}.get(toks[i], 0)
                i += 1
                if depth == 0:
                    break
            continue
        out.append(toks[i])
        i += 1
    return out


def _match(toks: list[str], i: int, open_: str, close: str) -> int:
    """Index just past the bracket closing toks[i] (== open_)."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j] == open_:
            depth += 1
        elif toks[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def _match_angle(toks: list[str], i: int) -> int:
    depth = 0
    paren = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t == "(":
            paren += 1
        elif t == ")":
            paren -= 1
        elif paren == 0 and t == "<":
            depth += 1
        elif paren == 0 and t == ">":
            depth -= 1
            if depth == 0:
                return j + 1
        elif paren == 0 and t == ">>":
            depth -= 2
            if depth <= 0:
                return j + 1
    return len(toks)


def _join(toks: list[str]) -> str:
    out = ""
    for t in toks:
        if out and (out[-1].isalnum() or out[-1] == "_") and (t[0].isalnum() or t[0] == "_"):
            out += " "
        elif t in {"&", "&&", "*"} and out and out[-1] not in " <(,":
            out += " " if False else ""
        out += t
    return out.replace(",", ", ")


def _split_params(toks: list[str]) -> list[str]:
    """Top-level comma split of a parameter list's tokens."""
    out, cur, depth = [], [], 0
    for t in toks:
        if t in "(<[{":
            depth += 1
        elif t in ")>]}":
            depth -= 1
        elif t == ">>":
            depth -= 2
        if t == "," and depth == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return [_join(p) for p in out if p and p != ["void"]]


def _form(name: str, params: list[str]) -> str:
    text = " ".join(params)
    if re.search(r"\bmask\s*\[", text) or re.search(r"\bmask\[\]", text):
        return "level-0 (mask[])"
    if re.search(r"\brepeatTimes?\b", text) and re.search(r"\bmask\b", text):
        return "level-0 (mask)"
    if re.search(r"\b(count|calCount)\b", text):
        return "level-2 (count)"
    return ""


class Scanner:
    """Walks a preprocessed header's tokens and records declarations in namespace AscendC and at global scope."""

    def __init__(self, header: str):
        self.header = header
        self.decls: list[Decl] = []

    def scan(self, toks: list[str]) -> list[Decl]:
        self._block(toks, 0, len(toks), scope="global")
        return self.decls

    def _block(self, toks, i, end, scope, owner=None, owner_template="", access="public"):
        template = None
        while i < end:
            t = toks[i]
            if t == "namespace":
                j = i + 1
                name = []
                while toks[j] != "{" and toks[j] != "=":
                    name.append(toks[j])
                    j += 1
                if toks[j] == "=":
                    i = toks.index(";", j) + 1
                    continue
                close = _match(toks, j, "{", "}")
                ns = "".join(name)
                inner = "AscendC" if ns == "AscendC" else None
                if inner and scope == "global":
                    self._block(toks, j + 1, close - 1, "AscendC")
                i = close
                continue
            if t in ("public", "private", "protected") and i + 1 < end and toks[i + 1] == ":":
                access = t
                i += 2
                continue
            if t == "template":
                j = _match_angle(toks, i + 1)
                template = _join(toks[i + 2:j - 1])
                i = j
                continue
            if t == "using":
                j = i
                while toks[j] != ";":
                    j += 1
                if owner is None and scope != "other":
                    stmt = toks[i + 1:j]
                    if "=" in stmt and stmt[0] != "namespace":
                        self._add(Decl("constant", stmt[0], self.header, scope, template or ""))
                    elif stmt and stmt[0] != "namespace" and "::" in stmt:
                        self._add(Decl("constant", stmt[-1], self.header, scope))
                template = None
                i = j + 1
                continue
            if t in ("enum",):
                j = i + 1
                if toks[j] in ("class", "struct"):
                    j += 1
                name = toks[j] if toks[j] not in (":", "{") else ""
                k = j
                while k < end and toks[k] not in ("{", ";"):
                    k += 1
                if toks[k] == "{":
                    close = _match(toks, k, "{", "}")
                    if owner is None and name:
                        self._add(Decl("enum", name, self.header, scope))
                        scoped = toks[i + 1] in ("class", "struct")
                        for val in _split_params(toks[k + 1:close - 1]):
                            v = val.split("=")[0].strip()
                            if v:
                                self._add(Decl("value", f"{name}::{v}" if scoped else v, self.header, scope,
                                               form=name))
                    i = close
                    while i < end and toks[i] != ";":
                        i += 1
                    i += 1
                else:
                    i = k + 1
                template = None
                continue
            if t in ("class", "struct", "union") and owner is None:
                j = i + 1
                while toks[j] in ("alignas",) or toks[j].startswith("__"):
                    j = _match(toks, j + 1, "(", ")") if toks[j + 1] == "(" else j + 1
                name = toks[j]
                k = j + 1
                while k < end and toks[k] not in ("{", ";"):
                    k += 1
                if toks[k] == "{":
                    close = _match(toks, k, "{", "}")
                    if re.match(r"[A-Za-z_]\w*$", name) and not name.startswith("_"):
                        self._add(Decl("class", name, self.header, scope, template or ""))
                        self._block(toks, k + 1, close - 1, scope, owner=name, owner_template=template or "",
                                    access="private" if t == "class" else "public")
                    i = close
                    while i < end and toks[i] != ";":
                        i += 1
                    i += 1
                elif toks[k] == ";" and template is not None and "<" not in toks[j:k]:
                    self._add(Decl("class", name, self.header, scope, template or ""))
                    i = k + 1
                else:
                    i = k + 1
                template = None
                continue
            if t == "{":  # a body we do not look into
                i = _match(toks, i, "{", "}")
                template = None
                continue
            # a declaration statement: up to ';' or a body
            j = i
            while j < end and toks[j] not in (";", "{"):
                if toks[j] == "(":
                    j = _match(toks, j, "(", ")")
                    continue
                j += 1
            stmt = toks[i:j]
            body_end = j + 1
            if j < end and toks[j] == "{":
                body_end = _match(toks, j, "{", "}")
                if body_end < end and toks[body_end] == ";":
                    body_end += 1
            self._statement(stmt, scope, template, owner, owner_template, access)
            template = None
            i = body_end

    def _statement(self, stmt, scope, template, owner, owner_template, access):
        if not stmt or (owner is not None and access != "public"):
            return
        if "(" not in stmt:
            if owner is None and stmt[0] in ("constexpr", "const", "static") and "=" in stmt:
                name = stmt[stmt.index("=") - 1]
                if name != "]":
                    self._add(Decl("constant", name, self.header, scope))
            return
        p = stmt.index("(")
        # skip attribute macros written as NAME(...) before the declaration proper
        while p > 0 and (stmt[p - 1].startswith("__") or stmt[p - 1] in ("alignas", "__attribute__")) and \
                stmt[p - 1] not in ("__aicore__",):
            q = _match(stmt, p, "(", ")")
            if "(" not in stmt[q:]:
                return
            p = stmt.index("(", q)
        name = stmt[p - 1]
        if name in _KEYWORDS or not re.match(r"[A-Za-z_~]\w*$", name) or name.startswith("_"):
            if p >= 2 and stmt[p - 2] == "operator":
                name = "operator" + stmt[p - 1]
            else:
                return
        if "=" in stmt[:p] or (owner is None and p < 2):
            return
        q = _match(stmt, p, "(", ")")
        params = _split_params(stmt[p + 1:q - 1])
        if owner is not None:
            if name == owner or name == "~" + owner or name.startswith("~") or stmt[p - 2:p - 1] == ["~"]:
                kind_name = f"{owner}::{owner}" if name == owner else None
                if kind_name is None:
                    return
                self._add(Decl("member", kind_name, self.header, scope, template or "", params, owner_template))
                return
            self._add(Decl("member", f"{owner}::{name}", self.header, scope, template or "", params, owner_template))
            return
        self._add(Decl("function", name, self.header, scope, template or "", params, form=_form(name, params)))

    def _add(self, d: Decl):
        self.decls.append(d)


def read_cann(root: Path) -> list[Decl]:
    files = []
    for g in HEADER_GLOBS:
        files += sorted(root.glob(g))
    files += [root / h for h in EXTRA_HEADERS if (root / h).is_file()]
    decls: list[Decl] = []
    for f in files:
        rel = str(f.relative_to(root))
        found = Scanner(rel).scan(tokens(preprocess(f))) + [Decl("macro", m, rel, "global") for m in public_macros(f)]
        if rel.startswith("impl/"):
            found = [d for d in found if d.base in IMPL_PUBLIC]
        decls += found
    return _dedupe(decls)


def _dedupe(decls: list[Decl]) -> list[Decl]:
    seen, out = set(), []
    for d in decls:
        key = (d.kind, d.name, d.scope, d.template, tuple(d.params))
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out



# ---------------------------------------------------------------------------------------------- probing
_BUILTIN = {"int", "char", "short", "long", "unsigned", "signed", "float", "double", "bool", "void", "const",
            "volatile", "auto"}
# concrete values for template parameters a probe must spell out (non-type parameters without a default)
_NTTP = {"TPosition": "TPosition::VECIN", "QuePosition": "TPosition::VECIN", "HardEvent": "HardEvent::V_S",
         "pipe_t": "PIPE_V", "bool": "false", "Hardware": "Hardware::UB"}


# type aliases CANN's classes declare and use in their members' signatures
_CLASS_TYPES = {"PrimType": "float", "TTagType": "int32_t"}
# Template type parameters that stand for a queue or buffer pool, not an element type: the probe passes one.
_QUEUE = "AscendC::TQue<AscendC::TPosition::VECIN, 1>"
_POOL = "AscendC::TBufPool<AscendC::TPosition::VECCALC>"
_PROBE_TYPES = {"TPipe::InitBuffer": {"T": _QUEUE}, "TBufPool::InitBuffer": {"T": _QUEUE},
                "TPipe::InitBufPool": {"T": _POOL, "U": _POOL}, "TBufPool::InitBufPool": {"T": _POOL, "U": _POOL}}


def _tparams(template: str) -> list[tuple[str, str, bool, bool]]:
    """(name, kind 'type'|'value'|'pack', has_default, is_type_of_value) for each template parameter."""
    out = []
    for p in _split_params(tokens(template)):
        toks = tokens(p.split("=")[0])
        has_default = "=" in p
        if not toks:
            continue
        if "..." in toks:
            out.append((toks[-1], "pack", True, ""))
        elif toks[0] in ("typename", "class") or (toks[0] == "template"):
            out.append((toks[-1], "type", has_default, ""))
        else:
            out.append((toks[-1], "value", has_default, " ".join(toks[:-1])))
    return out


def _strip_declarator(param: str) -> str:
    p = param.split("=")[0].strip()
    toks = tokens(p)
    if len(toks) >= 5 and toks[-1] == "]" and ")" in toks and toks[toks.index(")") - 2:toks.index(")")][0] == "&":
        k = toks.index(")")  # (&NAME)[N]: a reference to an array, kept as one (TYPE (&)[N])
        return _join(toks[:k - 1] + toks[k:])
    if len(toks) >= 2 and toks[-1] == "]":  # NAME[] / NAME[N]
        k = toks.index("[")
        return _join(toks[:k - 1]) + "*"
    if len(toks) >= 2 and re.match(r"[A-Za-z_]\w*$", toks[-1]) and toks[-1] not in _BUILTIN and toks[-2] != "::" \
            and not (toks[-2] in ("const", "unsigned", "signed", "long", "short") and toks[-1] in _BUILTIN):
        toks = toks[:-1]
    return _join(toks)


def _subst(text: str, names: dict[str, str]) -> str:
    for k, v in names.items():
        text = re.sub(rf"\b{re.escape(k)}\b", v, text)
    return text


def _targs(template: str, params_text: str) -> tuple[str, dict[str, str]]:
    """The explicit template argument list a probe needs, and what each parameter name stands for."""
    tp = _tparams(template)
    values: dict[str, str] = {}
    for name, kind, _, vtype in tp:
        if kind == "type":
            values[name] = "float"
        elif kind == "value":
            base = vtype.replace("const", "").strip().split("::")[-1]
            values[name] = _NTTP.get(base, f"static_cast<{vtype}>(1)" if vtype not in ("auto",) else "1")
    used = set(tokens(params_text))
    need = -1
    for i, (name, kind, has_default, _) in enumerate(tp):
        if kind != "pack" and not has_default and name not in used:
            need = i
    if need < 0:
        return "", values
    return "<" + ", ".join(values[tp[i][0]] for i in range(need + 1)) + ">", values


def probe_line(d: Decl) -> str:
    q = "::" if d.scope == "global" else "AscendC::"
    if d.kind == "macro":
        return f"#ifndef {d.name}\n#error probe\n#endif"
    if d.kind in ("class", "enum", "constant"):
        return f"namespace {{ using {q}{d.name}; }}"
    if d.kind == "value":
        return f"namespace {{ [[maybe_unused]] const auto probe_{abs(hash(d.name))} = {q}{d.name}; }}"
    if d.kind == "function":
        targs, values = _targs(d.template, " ".join(d.params))
        args = ", ".join(f"std::declval<{_subst(_strip_declarator(p), values)}>()" for p in d.params)
        return f"namespace {{ [[maybe_unused]] auto probe_{id(d)}() -> decltype({q}{d.name}{targs}({args})); }}"
    if d.kind == "member":
        owner, member = d.name.split("::")
        otargs, ovalues = _targs(d.owner_template, "")
        if d.owner_template and not otargs:
            otargs = "<>"
        ovalues.update(_CLASS_TYPES)
        targs, values = _targs(d.template, " ".join(d.params))
        values = {**ovalues, **values, **_PROBE_TYPES.get(d.name, {})}
        args = ", ".join(f"std::declval<{_subst(_strip_declarator(p), values)}>()" for p in d.params)
        cls = f"{q}{owner}{otargs}"
        if member == owner:
            return f"namespace {{ [[maybe_unused]] auto probe_{id(d)}() -> decltype({cls}({args})); }}"
        if member.startswith("operator") and len(d.params) == 1:  # member or free operator, either counts
            return (f"namespace {{ [[maybe_unused]] auto probe_{id(d)}() -> decltype(std::declval<{cls}&>() "
                    f"{member[len('operator'):]} {args}); }}")
        tmpl = "template " if targs else ""
        return (f"namespace {{ [[maybe_unused]] auto probe_{id(d)}() -> decltype(std::declval<{cls}&>()."
                f"{tmpl}{member}{targs}({args})); }}")
    return ""


def probe(decls: list[Decl], extra_flags: list[str] = ()) -> set[int]:
    """Indexes of the declarations whose probe fails to compile against the emulator."""
    lines = ["#include <utility>", '#include "kernel_operator.h"', "using namespace AscendC;"]
    where: dict[int, int] = {}  # probe.cpp line -> declaration index
    for i, d in enumerate(decls):
        for part in probe_line(d).split("\n"):
            lines.append(part)
            where[len(lines)] = i
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.cpp"
        src.write_text("\n".join(lines) + "\n")
        r = subprocess.run(["g++", *cflags(), "-fsyntax-only", "-fmax-errors=0", *extra_flags, str(src)],
                           capture_output=True, text=True)
    failed: set[int] = set()
    block: list[str] = []
    for line in r.stderr.splitlines():
        block.append(line)
        if "error" in line and ("error:" in line or "#error" in line):
            for b in reversed(block):
                m = re.search(r"probe\.cpp:(\d+)", b)
                if m and int(m.group(1)) in where:
                    failed.add(where[int(m.group(1))])
                    break
            block = []
    return failed


def rejected_names() -> set[str]:
    """Names opkit_emu/unsupported.h rejects at compile time."""
    path = include_dir() / "opkit_emu" / "unsupported.h"
    if not path.is_file():
        return set()
    return set(re.findall(r"^OPKIT_EMU_REJECT_\w+\(\s*(\w+)", path.read_text(), flags=re.M))


def rejected_forms() -> set[tuple[str, str, str]]:
    """(CANN header, name, part of the label or "") of declarations the emulator rejects while it implements the
    name's other forms (the `OPKIT_EMU_REJECT_FORM: HEADER NAME [LABEL-PART]` lines of opkit_emu/unsupported.h;
    `_` in LABEL-PART stands for a space)."""
    path = include_dir() / "opkit_emu" / "unsupported.h"
    if not path.is_file():
        return set()
    return {(h, n, part.replace("_", " ")) for h, n, part in
            re.findall(r"^// OPKIT_EMU_REJECT_FORM: (\S+) (\w+)(?: (\S+))?", path.read_text(), flags=re.M)}


STATUSES = ("implemented", "documented difference", "rejected", "missing")


def classify(decls: list[Decl]) -> list[str]:
    failed = probe(decls)
    rejected = rejected_names()
    forms = rejected_forms()
    out = []
    for i, d in enumerate(decls):
        base = d.base if d.kind in ("member", "value") else d.name
        uses_rejected = any(t in rejected for p in d.params for t in tokens(p))
        form_rejected = any(d.header == h and d.name == n and part in label(d) for h, n, part in forms)
        if d.name in rejected or base in rejected or uses_rejected or form_rejected:
            out.append("rejected")
        elif i in failed:
            out.append("missing")
        elif d.name in DIFFERENCES or base in DIFFERENCES:
            out.append("documented difference")
        else:
            out.append("implemented")
    return out


def label(d: Decl) -> str:
    if d.kind in ("function", "member") and d.form:
        return f"{d.name} [{d.form}]"
    if d.kind in ("function", "member"):
        return f"{d.name}({', '.join(_strip_declarator(p) for p in d.params)})"
    return d.name



BEGIN = "<!-- inventory:begin (python -m opkit.emulator.inventory --write-docs; do not edit by hand) -->"
END = "<!-- inventory:end -->"


def commit_of(root: Path) -> str:
    r = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "(not a git checkout)"


def coverage_markdown(decls: list[Decl], status: list[str], source: str, uses: list[set[str]] | None = None,
                      used_by: str = "") -> str:
    """The coverage table (counts per header) and the list of what is missing, as markdown. With `uses` (the
    kernels of CANN's sample/op repositories using each declaration, inventory/usage.py), each header also
    says how many of the names those kernels use are implemented, and the missing list is ordered by use."""
    per: dict[str, Counter] = defaultdict(Counter)
    missing: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for i, (d, s) in enumerate(zip(decls, status)):
        per[d.header][s] += 1
        u = uses[i] if uses else set()
        if u:
            per[d.header]["used"] += 1
            per[d.header]["used " + s] += 1
        if s == "missing":
            missing[d.header][label(d)] |= u
    total = sum(per.values(), Counter())
    done = lambda c: c["used implemented"] + c["used documented difference"]  # noqa: E731
    lines = [f"Source: CANN's public headers at {source}, A2 view (`__NPU_ARCH__` 2201). One row per header; a "
             "function counts once per overload, a class once plus once per public member, an enum once plus "
             "once per value."]
    head = "| header | implemented | documented difference | rejected | missing |"
    if uses is not None:
        lines += ["", f"Used by CANN's samples/op repos ({used_by}): **{done(total)} implemented of "
                  f"{total['used']} used** ({total['used rejected']} rejected: cube side or not on A2; "
                  f"{total['used missing']} missing). The last column counts, per header, the names at least one "
                  "of those kernels uses (docs/emulator.md, \"Which names CANN's kernels use\")."]
        head += " used by CANN's kernels: implemented of used |"
    lines += ["", head, "|---|---|---|---|---|" + ("---|" if uses is not None else "")]
    for h in sorted(per):
        c = per[h]
        row = f"| `{h}` | {c['implemented']} | {c['documented difference']} | {c['rejected']} | {c['missing']} |"
        lines.append(row + (f" {done(c)} of {c['used']} |" if uses is not None else ""))
    row = (f"| **all** | **{total['implemented']}** | **{total['documented difference']}** | "
           f"**{total['rejected']}** | **{total['missing']}** |")
    lines.append(row + (f" **{done(total)} of {total['used']}** |" if uses is not None else ""))
    lines += ["", "Missing, by header (each is a compile error naming it, not a silent difference)"
              + ("; in brackets, how many of CANN's kernels use it, most used first:" if uses is not None else ":"), ""]
    for h in sorted(missing):
        names = sorted(missing[h].items(), key=lambda kv: (-len(kv[1]), kv[0]))
        lines.append(f"- `{h}`: " + ", ".join(f"`{n}`" + (f" ({len(u)})" if u else "") for n, u in names))
    return "\n".join(lines)


def write_docs(doc: Path, table: str) -> None:
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{doc}: the markers {BEGIN!r} ... {END!r} are missing")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + BEGIN + "\n" + table + "\n" + END + tail)
