"""op.yaml -> OpSpec: every field checked, every error reported at once with ``<file>:<line>: <field>``.

Allowed values come from their owners: distributions from the harness's registry, accuracy override keys
from the standard, dtypes from the data model, so a new one is added in one place.
"""
from __future__ import annotations

import re as _re
from pathlib import Path

import yaml as _yaml

from ..errors import OpkitError, SpecError
from .check_tests import _accuracy, _tests
from .model import (ATTR_TYPES, DTYPES, LIST_ATTR_TYPES, REDUCE_SHAPE, AttrSpec, BackwardSpec, InputSpec, OpSpec,
                    OutputSpec, attr_value_ok)
from .yaml_nodes import Checker as _Checker
from .yaml_nodes import Node as _Node
from .yaml_nodes import kind as _kind
from .yaml_nodes import wrap as _wrap

FAMILIES = ("norm", "softmax", "elementwise", "reduce", "fused", "custom")
VALUES = ("data", "weight", "bias", "grad")
ROLES = {"dim": "int", "keepdim": "bool"}
TOP_KEYS = ("op", "family", "summary", "inputs", "outputs", "attrs", "compute_dtype", "backward", "tests",
            "accuracy", "lang", "tbe", "cann", "auto_sync")
LANGS = ("ascendc", "tbe", "cann")
TBE_KEYS = ("function", "soc")
CANN_KEYS = ("op_type", "kernel", "repo", "opbase", "lists")  # lang cann: the OpType, the kernel file, CANN's libraries (docs/cann.md)
_DIM_NAME = _re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def load_spec(path: str | Path, bundled: bool = False) -> OpSpec:
    """Load and validate ``op.yaml`` (or the folder holding it). Raises SpecError naming file:line."""
    path = Path(path)
    if path.is_dir():
        path = path / "op.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{path}:1: <document>: cannot read op spec: {e.strerror}") from None
    return parse_spec(text, path, bundled=bundled)


def parse_spec(text: str, path: Path, bundled: bool = False) -> OpSpec:
    path = Path(path)
    try:
        root = _yaml.compose(text, Loader=_yaml.SafeLoader)
    except _yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise SpecError(f"{path}:{line}: <document>: not valid YAML: {getattr(e, 'problem', e)}") from None
    if root is None:
        raise SpecError(f"{path}:1: <document>: the file is empty; expected a mapping with fields "
                        f"{', '.join(TOP_KEYS)}")
    c = _Checker(path)
    doc = _wrap(root, "")
    top = c.mapping(doc, TOP_KEYS, required=("op", "inputs", "outputs"))
    if top is None:
        c.raise_if_any()
    spec = _build(c, top, doc, path, bundled)
    c.raise_if_any()
    return spec


def _build(c: _Checker, top: dict, doc: _Node, path: Path, bundled: bool) -> OpSpec | None:
    from .names import check_op_name

    name = snake = None
    if "op" in top:
        name = c.string(top["op"], "a CamelCase op name such as LayerNormFP32")
        if name is not None:
            try:
                snake = check_op_name(name)
            except OpkitError as e:
                c.error(top["op"], str(e))
    family = "custom"
    if "family" in top:
        family = c.string(top["family"], "a family name", FAMILIES) or family
    summary = ""
    if "summary" in top:
        summary = c.string(top["summary"], "a one-line description") or ""
    compute = "float32"
    if "compute_dtype" in top:
        compute = c.string(top["compute_dtype"], "a dtype name", tuple(DTYPES)) or compute

    lang = "ascendc"
    if "lang" in top:
        lang = c.string(top["lang"], "a kernel language", LANGS) or lang
    tbe = {}
    if "tbe" in top:
        tbe_map = c.mapping(top["tbe"], TBE_KEYS) or {}
        tbe = {k: c.string(v, "a function name" if k == "function" else "a SoC version such as Ascend910B")
               for k, v in tbe_map.items()}
    auto_sync = True      # false: build the kernel as `--cce-auto-sync=off` would (docs/emulator.md "Pipe hazards")
    if "auto_sync" in top:
        if isinstance(top["auto_sync"].value, bool):
            auto_sync = top["auto_sync"].value
        else:
            c.error(top["auto_sync"], "expected true (CANN's default, --cce-auto-sync=on) or false (the kernel "
                                      "syncs the scalar unit itself, --cce-auto-sync=off)")
    cann = {}
    if "cann" in top:
        for k, v in (c.mapping(top["cann"], CANN_KEYS) or {}).items():
            if k == "lists":   # a DYNAMIC (tensor-list) param: how many tensors, op.yaml's <name>_0 ... (docs/cann.md)
                sizes = v.value if isinstance(v.value, dict) else None
                if sizes is None or not all(isinstance(n.value, int) and not isinstance(n.value, bool)
                                            and n.value > 0 for n in sizes.values()):
                    c.error(v, "expected a mapping of DYNAMIC parameter names to tensor counts (positive ints), "
                               "e.g. {x: 2, y: 2}")
                else:
                    cann[k] = {name: n.value for name, n in sizes.items()}
                continue
            cann[k] = c.string(v, "an OpType" if k == "op_type" else "a folder (the op's ops-math / ops-nn checkout, "
                               "hicann/opbase)" if k in ("repo", "opbase") else "a path such as op_kernel/add_custom.cpp")

    inputs = _inputs(c, top.get("inputs"))
    input_names = [i.name for i in inputs]
    attrs = _attrs(c, top.get("attrs"))
    attr_names = [a.name for a in attrs]
    outputs = _outputs(c, top.get("outputs"), input_names, attrs)

    seen: dict[str, str] = {}
    for kind, names, node_key in (("input", input_names, "inputs"), ("output", [o.name for o in outputs], "outputs"),
                                  ("attr", attr_names, "attrs")):
        for i, n in enumerate(names):
            if n in seen:
                node = top[node_key].value[i].value.get("name") if isinstance(top[node_key].value, list) else None
                c.error(node, f"name {n!r} is already used by an {seen[n]}; expected unique names "
                              "across inputs, outputs and attrs")
            seen[n] = kind
            if kind != "attr" and n in ("workspace", "tiling"):
                node = top[node_key].value[i].value.get("name") if isinstance(top[node_key].value, list) else None
                c.error(node, f"{kind} name {n!r} is reserved (the kernel's last two arguments are workspace "
                              "and tiling); pick another name")
    if snake and snake in seen:
        c.error(top["op"], f"the op's snake name {snake!r} equals an argument name; rename one")

    # raw names (even of entries that failed validation), so one mistake is reported once
    backward = _backward(c, top.get("backward"), input_names, _raw_names(top.get("outputs")),
                         _raw_names(top.get("attrs")))
    tests = _tests(c, top.get("tests"), inputs, attrs)
    accuracy = _accuracy(c, top.get("accuracy"))
    if lang != "cann":
        for a in attrs:
            if a.type in LIST_ATTR_TYPES:
                c.error(top["attrs"], f"attr {a.name} is {a.type}: list attrs are taken for `lang: cann` ops only "
                                      "(an AscendC op's attrs reach its tiling as scalars)")
    if c.errors or name is None or snake is None:
        return None
    return OpSpec(name=name, snake=snake, family=family, summary=summary, inputs=tuple(inputs),
                  outputs=tuple(outputs), attrs=tuple(attrs), compute_dtype=compute, backward=backward,
                  tests=tests, accuracy=accuracy, dir=path.parent.resolve(), bundled=bundled,
                  lang=lang, tbe=tbe, cann=cann, auto_sync=auto_sync)


def _raw_names(node: _Node | None) -> list[str]:
    if node is None or not isinstance(node.value, list):
        return []
    return [str(i.value["name"].value) for i in node.value if isinstance(i.value, dict) and "name" in i.value]


def _inputs(c: _Checker, node: _Node | None) -> list[InputSpec]:
    out: list[InputSpec] = []
    if node is None:
        return out
    items = c.seq(node, "inputs (mappings with name, shape, and dtypes for the first)")
    for idx, item in enumerate(items or []):
        m = c.mapping(item, ("name", "dtypes", "shape", "values"), required=("name", "shape"))
        if m is None:
            continue
        name = c.identifier(m["name"], "input name") if "name" in m else None
        dtypes: tuple[str, ...] = ()
        if idx == 0:
            if "dtypes" not in m:
                c.error(item, "the first (lead) input must list its dtypes, e.g. [float16, bfloat16, float32]",
                        field=f"{item.path}.dtypes")
            else:
                lst = c.seq(m["dtypes"], "dtype names")
                got = [c.string(d, "a dtype name", tuple(DTYPES)) for d in lst or []]
                dtypes = tuple(d for d in got if d)
                if len(set(dtypes)) != len(dtypes):
                    c.error(m["dtypes"], "dtypes repeat; expected each dtype once")
        elif "dtypes" in m:
            c.error(m["dtypes"], "only the first (lead) input lists dtypes; the others take the lead's dtype "
                                 "(the binding casts them); remove this field")
        shape = _shape(c, m["shape"]) if "shape" in m else ()
        values = "data"
        if "values" in m:
            values = c.string(m["values"], "a value kind", VALUES) or "data"
        if name is not None:
            out.append(InputSpec(name=name, shape=shape, dtypes=dtypes, values=values))
    return out


def _shape(c: _Checker, node: _Node) -> tuple[str | int, ...]:
    what = "shape tokens: integers, dim names (C, N, ...) or '...'"
    items = c.seq(node, what, allow_empty=True)
    toks: list[str | int] = []
    for i, t in enumerate(items or []):
        v = t.value
        if v is Ellipsis or v == "...":
            if i != 0:
                c.error(t, "'...' may only be the first shape token (it stands for the leading dims)")
            toks.append("...")
        elif isinstance(v, bool):
            c.error(t, f"expected {what}; got a bool")
        elif isinstance(v, int):
            if v < 1:
                c.error(t, f"fixed dims must be >= 1; got {v}")
            toks.append(v)
        elif isinstance(v, str) and _DIM_NAME.match(v):
            toks.append(v)
        else:
            c.error(t, f"expected {what}; got {_kind(v)} {v!r}")
    return tuple(toks)


def _attrs(c: _Checker, node: _Node | None) -> list[AttrSpec]:
    out: list[AttrSpec] = []
    if node is None or node.value is None:
        return out
    items = c.seq(node, "attrs (mappings with name and type)", allow_empty=True)
    roles_seen: set[str] = set()
    for item in items or []:
        m = c.mapping(item, ("name", "type", "default", "role", "choices"), required=("name", "type"))
        if m is None:
            continue
        name = c.identifier(m["name"], "attr name") if "name" in m else None
        typ = c.string(m["type"], "an attr type", tuple(ATTR_TYPES)) if "type" in m else None
        default = None
        if "default" in m and typ is not None:
            default = _plain(m["default"].value)
            ok = attr_value_ok(typ, default)
            if not ok:
                c.error(m["default"], f"default {default!r} is {_kind(default)}; expected a {typ} "
                                      f"(the attr's type)")
        role = None
        if "role" in m:
            role = c.string(m["role"], "an attr role", tuple(ROLES))
            if role and typ and ROLES[role] != typ:
                c.error(m["role"], f"role {role!r} needs type {ROLES[role]}; the attr's type is {typ}")
            if role in roles_seen:
                c.error(m["role"], f"only one attr may have role {role!r}")
            if role:
                roles_seen.add(role)
        choices: tuple = ()
        if "choices" in m:
            lst = c.seq(m["choices"], "allowed values")
            choices = tuple(_plain(x.value) for x in lst or [])
            if typ:
                for x in lst or []:
                    if not attr_value_ok(typ, _plain(x.value)):
                        c.error(x, f"choice {x.value!r} is {_kind(x.value)}; expected a {typ}")
            if default is not None and choices and default not in choices:
                c.error(m["default"], f"default {default!r} is not one of the choices {list(choices)}")
        if name is not None and typ is not None:
            out.append(AttrSpec(name=name, type=typ, default=default, role=role, choices=choices))
    return out


def _outputs(c: _Checker, node: _Node | None, input_names: list[str], attrs: list[AttrSpec]) -> list[OutputSpec]:
    out: list[OutputSpec] = []
    if node is None:
        return out
    items = c.seq(node, "outputs (mappings with name, dtype and shape)")
    by_name = {a.name: a for a in attrs}
    for item in items or []:
        m = c.mapping(item, ("name", "dtype", "shape", "kernel_dtype"), required=("name", "dtype", "shape"))
        if m is None:
            continue
        name = c.identifier(m["name"], "output name") if "name" in m else None
        dtype = None
        if "dtype" in m:
            dtype = c.string(m["dtype"], "an input's name or a dtype name")
            if dtype is not None and dtype not in input_names and dtype not in DTYPES:
                c.error(m["dtype"], f"{dtype!r} is neither an input ({', '.join(input_names)}) nor a dtype "
                                    f"({', '.join(DTYPES)})")
                dtype = None
        shape = None
        if "shape" in m:
            shape = c.string(m["shape"], "an input's name or 'reduce(<input>, <dim attr>, <keepdim attr>)'")
            if shape is not None and shape not in input_names:
                r = REDUCE_SHAPE.match(shape)
                if not r:
                    c.error(m["shape"], f"{shape!r} is neither an input ({', '.join(input_names)}) nor "
                                        "'reduce(<input>, <dim attr>, <keepdim attr>)'")
                    shape = None
                else:
                    src, dim, keep = r.group(1), r.group(2), r.group(3)
                    if src not in input_names:
                        c.error(m["shape"], f"reduce(): {src!r} is not an input")
                    if dim not in by_name or by_name[dim].role != "dim":
                        c.error(m["shape"], f"reduce(): {dim!r} must be an attr with role: dim")
                    if keep and (keep not in by_name or by_name[keep].role != "keepdim"):
                        c.error(m["shape"], f"reduce(): {keep!r} must be an attr with role: keepdim")
        kernel_dtype = None
        if "kernel_dtype" in m:
            kernel_dtype = c.string(m["kernel_dtype"], "a dtype name", tuple(DTYPES))
        if name is not None and dtype is not None and shape is not None:
            out.append(OutputSpec(name=name, dtype=dtype, shape=shape, kernel_dtype=kernel_dtype))
    return out


_BWD_ARG = _re.compile(r"(grad|out|attr)\.(\w+)\Z|(\w+)\Z")


def _backward(c: _Checker, node: _Node | None, inputs: list[str], outputs: list[str],
              attrs: list[str]) -> BackwardSpec | None:
    if node is None or node.value is None:
        return None
    m = c.mapping(node, ("op", "args", "grads"), required=("op", "args", "grads"))
    if m is None or not all(k in m for k in ("op", "args", "grads")):
        return None
    op = c.string(m["op"], "the snake name of the backward op")
    if op is not None and not _re.match(r"[a-z][a-z0-9_]*\Z", op):
        c.error(m["op"], f"{op!r} is not a snake_case op name")
    args = []
    for a in c.seq(m["args"], "backward arguments") or []:
        s = c.string(a, "grad.<output> | <input> | out.<output> | attr.<attr>")
        if s is None:
            continue
        r = _BWD_ARG.match(s)
        ok = bool(r) and (
            (r.group(1) in ("grad", "out") and r.group(2) in outputs) or
            (r.group(1) == "attr" and r.group(2) in attrs) or
            (r.group(3) is not None and r.group(3) in inputs))
        if not ok:
            c.error(a, f"{s!r} names nothing; expected grad.<output> or out.<output> (outputs: "
                       f"{', '.join(outputs)}), <input> ({', '.join(inputs)}) or attr.<attr> "
                       f"({', '.join(attrs) or 'none'})")
        args.append(s)
    grads: dict[str, str] = {}
    gm = m["grads"]
    if not isinstance(gm.value, dict):
        c.error(gm, f"expected a mapping forward input -> backward output; got {_kind(gm.value)}")
    else:
        for k, v in gm.value.items():
            if k not in inputs:
                c.error(v, f"{k!r} is not a forward input ({', '.join(inputs)})", field=f"{gm.path}.{k}")
            s = c.string(v, "the backward op's output name")
            if s is not None:
                grads[k] = s
    return BackwardSpec(op=op or "", args=tuple(args), grads=grads)


def _plain(v):
    """A YAML value without its line-tracking wrappers (a list attr's default is a list of nodes)."""
    return [_plain(x.value if isinstance(x, _Node) else x) for x in v] if isinstance(v, list) else v
