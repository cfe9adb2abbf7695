"""Which inventoried AscendC names CANN's own kernels use: read from local checkouts of CANN's sample and op
repositories (never vendored), so the inventory can say "used by CANN's samples/op repos: N implemented of M
used" and list what is missing, most used first.

A *kernel* is one op or sample directory (the directory above `op_kernel/` in the ops repositories, else the
directory of the file). A kernel file is C++ source that mentions `__aicore__` or includes `kernel_operator.h`,
outside host, AI CPU, test and non-A2 trees: the 950 chip's (`arch35`/`v35` directories, the atvoss `*_apt.*`
entries, `*regbase*` files, files using its register API `MicroAPI`). In an
asc-devkit checkout only `examples/` counts: `tests/` exercises every API by construction and `impl/` is the
API itself.

A use is found from the tokens, without compiling (the kernels need CANN's whole build to compile):
- a free function: `Name(...)`, `Name<...>(...)`, `AscendC::Name(...)`, not after `.`/`->`, not a function the
  kernel defines itself; it counts for every overload whose parameter count fits and whose parameter types
  the kernel mentions (the level-0 `mask` and `mask[]` forms have the same count: a call counts for both);
- a member: `obj.Name(...)` / `obj->Name(...)` where the kernel declares `obj` as the class (or, when `obj`
  is not a variable it declares, where it names the class somewhere);
- a constructor: `Class name(...)`, `Class(...)`, `Class{...}`, `Class name;`;
- a class, enum, constant or macro: the identifier; a scoped enum value: `Enum::VALUE`.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from . import Decl, _match, _match_angle, _split_params, _strip_declarator, _tparams, tokens

KERNEL_SUFFIXES = {".cpp", ".h", ".hpp", ".cc", ".asc", ".cce"}
# Path parts whose files are not A2 AI Core kernels: host side, AI CPU, tests, 950-only (arch35 / register API).
SKIP_PARTS = {"op_host", "op_api", "op_graph", "framework", "op_kernel_aicpu", "aicpu", "tests", "test", "ut", "st",
              "arch35", "v35", "reg_compute", "02_reg_vector_compute", "04_reg_compute", "02_simd_c_api",
              "03_simt_api", "04_aicpu", "05_simd_simt_hybrid", "host", "scripts", "cmake", "build"}
_KERNEL_MARK = re.compile(r"__aicore__|kernel_operator\.h")
# The 950's register-based vector API (MicroAPI, vector-function scopes): such a file is no A2 kernel.
_REG_API = re.compile(r"\bMicroAPI\b|__VEC_SCOPE__|__simd_vf__|\bRegTensor\b")
_IDENT = re.compile(r"[A-Za-z_]\w*$")
_KEYWORDS = {"return", "const", "constexpr", "static", "inline", "typename", "class", "struct", "using", "new",
             "delete", "else", "case", "goto", "template", "virtual", "explicit", "friend", "__aicore__"}
_BUILTIN_TYPES = {"int", "char", "short", "long", "unsigned", "signed", "float", "double", "bool", "void", "const",
                  "volatile", "auto", "half", "bfloat16_t", "LocalTensor", "GlobalTensor", "size_t", "typename",
                  "std", "AscendC", "TPosition", "Args"}
# Classes reached through another name: TQue is a TQueBind, GetTPipePtr() returns the TPipe.
_CLASS_ALIASES = {"TQueBind": ("TQue", "TQueBind"), "TPipe": ("TPipe", "GetTPipePtr")}


def kernel_files(root: Path) -> list[Path]:
    """The A2 AI Core kernel sources of one checkout."""
    base = root / "examples" if (root / "include" / "basic_api").is_dir() else root
    out = []
    for p in sorted(base.rglob("*")):
        if p.suffix not in KERNEL_SUFFIXES or not p.is_file():
            continue
        if SKIP_PARTS.intersection(p.relative_to(root).parts[:-1]) or "_apt." in p.name or "regbase" in p.name:
            continue
        try:
            text = p.read_text(errors="replace")
        except OSError:
            continue
        if _KERNEL_MARK.search(text) and not _REG_API.search(text):
            out.append(p)
    return out


def kernel_of(root: Path, path: Path) -> str:
    parts = path.relative_to(root).parts
    if "op_kernel" in parts:
        return "/".join(parts[:parts.index("op_kernel")])
    return "/".join(parts[:-1]) or "."


def _arity(params: list[str]) -> tuple[int, float]:
    if any("..." in p for p in params):
        return sum("=" not in p and "..." not in p for p in params), float("inf")
    return sum("=" not in p for p in params), len(params)


def _call_args(toks: list[str], i: int) -> list[list[str]]:
    """The top-level arguments of the call whose '(' is toks[i]."""
    end = _match(toks, i, "(", ")")
    args, cur, depth = [], [], 0
    for t in toks[i + 1:end - 1]:
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        if t == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        args.append(cur)
    return args


class _Candidate:
    """What a declaration needs from a call to count as used by it."""

    def __init__(self, d: Decl):
        self.decl = d
        self.lo, self.hi = _arity(d.params)
        own = {n for n in re.findall(r"\b([A-Za-z_]\w*)\s*(?:=|,|$)", d.template + "," + d.owner_template)}
        types = set()
        for p in d.params:
            for t in tokens(_strip_declarator(p)):
                if _IDENT.match(t) and t not in _BUILTIN_TYPES and t not in own and not t.startswith("__") \
                        and not t.endswith("_t"):
                    types.add(t)
        self.types = types  # CANN types a caller of this overload names somewhere (SliceInfo, TBufHandle, ...)
        # explicit template arguments a call must (at least) and may (at most) give
        tp = _tparams(d.template) if d.template else []
        used = set(tokens(" ".join(d.params)))
        self.tmin = max((k + 1 for k, (n, kind, dflt, _) in enumerate(tp) if kind != "pack" and not dflt
                         and n not in used), default=0)
        self.tmax = float("inf") if any(kind == "pack" for _, kind, _, _ in tp) else len(tp)

    def fits(self, nargs: int, ntargs: int, words: set[str]) -> bool:
        return self.lo <= nargs <= self.hi and self.tmin <= ntargs <= self.tmax and self.types <= words


def kernels(root: Path) -> dict[str, list[Path]]:
    """The checkout's kernels ("repo:kernel") and their files."""
    out: dict[str, list[Path]] = defaultdict(list)
    for f in kernel_files(root):
        out[f"{root.name}:{kernel_of(root, f)}"].append(f)
    return dict(out)


def scan(decls: list[Decl], kernel_map: dict[str, list[Path]], progress=None) -> list[set[str]]:
    """For each declaration, the kernels that use it."""
    funcs, members, ctors, plain, scoped = (defaultdict(list) for _ in range(5))
    for i, d in enumerate(decls):
        if d.kind == "function":
            funcs[d.name].append((i, _Candidate(d)))
        elif d.kind == "member":
            owner, member = d.name.split("::", 1)
            (ctors[owner] if member == owner else members[member]).append((i, _Candidate(d)))
        elif d.kind == "value" and "::" in d.name:
            enum, value = d.name.split("::", 1)
            scoped[value].append((i, enum))
        else:
            plain[d.name.split("::")[-1]].append(i)
    uses: list[set[str]] = [set() for _ in decls]
    for name, paths in kernel_map.items():
        toks_of = [tokens(p.read_text(errors="replace")) for p in paths]
        words = set().union(*toks_of)
        defined, var_types = set(), defaultdict(set)
        for toks in toks_of:
            defined |= _defined_functions(toks)
            _declared_types(toks, var_types)
        for toks in toks_of:
            for i in _uses_in(toks, words, defined, var_types, funcs, members, ctors, plain, scoped):
                uses[i].add(name)
        if progress:
            progress()
    return uses


def _defined_functions(toks: list[str]) -> set[str]:
    """Names the file defines as functions itself: `Name(...) {` / `Name(...) const {`."""
    out = set()
    for i, t in enumerate(toks[:-1]):
        if toks[i + 1] == "(" and _IDENT.match(t) and (i == 0 or toks[i - 1] not in (".", "->", "~")):
            j = _match(toks, i + 1, "(", ")")
            while j < len(toks) and toks[j] in ("const", "override", "noexcept", "final"):
                j += 1
            if j < len(toks) and toks[j] == "{":
                out.add(t)
    return out


def _angle_end(toks: list[str], i: int) -> int:
    """Index past the '>' closing the '<' at toks[i], or i when it does not close within the statement
    (a comparison)."""
    depth = 0
    for j in range(i, min(len(toks), i + 64)):
        t = toks[j]
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif t == ">>":
            depth -= 2
        elif t in (";", "{", "}"):
            return i
        if depth <= 0:
            return j + 1
    return i


def _declared_types(toks: list[str], out: dict[str, set[str]]) -> None:
    """Variables (and members, parameters) the file declares, with the type they are declared as:
    `Type var`, `Type<...> var`, `Type* var`, `Type& var`, `const Type var`."""
    n = len(toks)
    for i, t in enumerate(toks):
        if not _IDENT.match(t) or t in _KEYWORDS:
            continue
        j = _angle_end(toks, i + 1) if i + 1 < n and toks[i + 1] == "<" else i + 1
        while j < n and toks[j] in ("*", "&", "&&", "const"):
            j += 1
        if j + 1 < n and _IDENT.match(toks[j]) and toks[j + 1] in (";", ",", "=", "(", "{", ")", "["):
            out[toks[j]].add(t)


def _object_type_ok(toks: list[str], i: int, owner: str, var_types: dict[str, set[str]]) -> bool | None:
    """Whether the object of the member call at toks[i] (after . or ->) is declared as `owner`; None when the
    object is not a plain variable the kernel declares (an expression, a template parameter's member...)."""
    names = _CLASS_ALIASES.get(owner, (owner,))
    obj = toks[i - 2] if i >= 2 else ""
    if obj == ")" and i >= 4 and toks[i - 3] == "(" and toks[i - 4] in names:  # GetTPipePtr()->X
        return True
    if not _IDENT.match(obj) or obj not in var_types:
        return None
    return any(n in var_types[obj] for n in names)


def _uses_in(toks, words, defined, var_types, funcs, members, ctors, plain, scoped):
    n = len(toks)
    for i, t in enumerate(toks):
        if not (t in funcs or t in members or t in ctors or t in plain or t in scoped):
            continue
        prev = toks[i - 1] if i else ""
        prev2 = toks[i - 2] if i > 1 else ""
        if prev in ("define", "undef"):
            continue
        member_access = prev in (".", "->")
        qualifier = prev2 if prev == "::" else None
        ours = qualifier is None or qualifier in ("AscendC", "") or not _IDENT.match(qualifier)
        # a call: NAME(...) or NAME<...>(...)
        j, ntargs = i + 1, 0
        if j < n and toks[j] == "<":
            k = _match_angle(toks, j)
            if k < n and toks[k] == "(":
                j, ntargs = k, len(_split_params(toks[i + 2:k - 1]))
        call = j < n and toks[j] == "("
        nargs = len(_call_args(toks, j)) if call else -1
        if t in funcs and call and not member_access and ours and (qualifier is not None or t not in defined):
            for idx, c in funcs[t]:
                if c.fits(nargs, ntargs, words):
                    yield idx
        if t in members and call and member_access:
            for idx, c in members[t]:
                owner = c.decl.name.split("::")[0]
                typed = _object_type_ok(toks, i, owner, var_types)
                if typed is None:  # not a declared variable: the kernel must at least name the class
                    typed = any(a in words for a in _CLASS_ALIASES.get(owner, (owner,)))
                if typed and c.fits(nargs, ntargs, words):
                    yield idx
        if t in ctors and not member_access and ours:
            k = _match_angle(toks, i + 1) if i + 1 < n and toks[i + 1] == "<" else i + 1
            if k < n and _IDENT.match(toks[k]) and k + 1 < n:
                k += 1  # Class name(...) / Class name{...} / Class name;
            if k < n and toks[k] in ("(", "{", ";"):
                cnt = 0 if toks[k] == ";" else len(_call_args(toks, k) if toks[k] == "(" else _brace_args(toks, k))
                for idx, c in ctors[t]:
                    if c.fits(cnt, c.tmin, words) or (c.decl.params == [] and cnt == 0):
                        yield idx
        if t in plain and not member_access and ours:
            yield from plain[t]
        if t in scoped and prev == "::":
            for idx, enum in scoped[t]:
                if prev2 == enum:
                    yield idx


def _brace_args(toks: list[str], i: int) -> list[list[str]]:
    end = _match(toks, i, "{", "}")
    inner = toks[i + 1:end - 1]
    return _call_args(["("] + inner + [")"], 0) if inner else []
