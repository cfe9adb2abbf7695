"""The GE prototype of a TBE op: read ``REG_OP(T).INPUT(..).OUTPUT(..).ATTR(..).OP_END_FACTORY_REG(T)``
(op_proto/*.h of a custom op project) and write one, with an InferShape function, for --package.

Macros (CANN's op prototype docs; Ascend/samples custom_op op_proto/*.h): INPUT / OPTIONAL_INPUT /
DYNAMIC_INPUT (name, TensorType({DT_...})), OUTPUT / DYNAMIC_OUTPUT, ATTR(name, Type, default),
REQUIRED_ATTR(name, Type). Infer: IMPLEMT_COMMON_INFERFUNC(f) + COMMON_INFER_FUNC_REG(T, f).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import OpkitError
from .ini import Attr, OpInfo, Param

GE_DTYPES = {"DT_FLOAT16": "float16", "DT_FLOAT": "float32", "DT_BF16": "bfloat16", "DT_INT32": "int32",
             "DT_INT64": "int64", "DT_INT8": "int8", "DT_UINT8": "uint8", "DT_BOOL": "bool", "DT_INT16": "int16"}
TO_GE = {v: k for k, v in GE_DTYPES.items()}
ATTR_TYPES = {"Float": "float", "Int": "int", "Bool": "bool", "String": "str", "ListInt": "listInt",
              "ListFloat": "listFloat"}
_ITEM = re.compile(r"\.\s*(INPUT|OPTIONAL_INPUT|DYNAMIC_INPUT|OUTPUT|DYNAMIC_OUTPUT|ATTR|REQUIRED_ATTR)\s*\(")


def read(path: str | Path) -> dict[str, OpInfo]:
    """Op type -> OpInfo (dtypes from TensorType lists) for every REG_OP in the header."""
    path = Path(path)
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", Path(path).read_text(), flags=re.S)
    out = {}
    for m in re.finditer(r"REG_OP\s*\(\s*(\w+)\s*\)(.*?)OP_END_FACTORY_REG\s*\(\s*(\w+)\s*\)", text, re.S):
        op_type, body = m[1], m[2]
        inputs, outputs, attrs = [], [], []
        for item in _ITEM.finditer(body):
            args = _balanced(body, item.end())
            kind = item[1]
            name = args.split(",", 1)[0].strip()
            if kind.endswith("ATTR"):
                parts = [p.strip() for p in _split_top(args)]
                attrs.append(Attr(name, ATTR_TYPES.get(parts[1], parts[1]) if len(parts) > 1 else "float",
                                  "required" if kind == "REQUIRED_ATTR" else "optional",
                                  parts[2] if len(parts) > 2 else None))
                continue
            dtypes = [GE_DTYPES.get(d, d.lower()) for d in re.findall(r"DT_\w+", args)]
            if "TensorType::" in args and not dtypes:
                dtypes = ["float16", "float32"]         # TensorType::FloatingDataType() and friends
            p = Param(name, "optional" if kind.startswith("OPTIONAL") else
                      "dynamic" if kind.startswith("DYNAMIC") else "required", dtypes)
            (outputs if "OUTPUT" in kind else inputs).append(p)
        out[op_type] = OpInfo(op_type, inputs, outputs, attrs, source=str(path))
    if not out:
        raise OpkitError(f"{path}: no REG_OP(...)...OP_END_FACTORY_REG(...) prototype found")
    return out


def _balanced(text: str, start: int) -> str:
    depth, i = 1, start
    while depth and i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1]


def _split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def render(info: OpInfo, same_shape_as: dict[str, str]) -> tuple[str, str]:
    """(header, source) of the prototype. ``same_shape_as``: output -> the input whose shape and dtype it
    takes (the InferShape rule opkit can state for ops whose outputs follow an input)."""
    T = info.op_type

    def tt(p: Param) -> str:
        return "TensorType({" + ", ".join(dict.fromkeys(TO_GE.get(d, "DT_FLOAT") for d in p.dtypes)) + "})"
    lines = [f"#ifndef OPKIT_OP_PROTO_{T.upper()}_H", f"#define OPKIT_OP_PROTO_{T.upper()}_H",
             '#include "graph/operator_reg.h"', "", "namespace ge {", f"REG_OP({T})"]
    for p in info.inputs:
        lines.append(f"    .{'OPTIONAL_INPUT' if p.param_type == 'optional' else 'INPUT'}({p.name}, {tt(p)})")
    for p in info.outputs:
        lines.append(f"    .OUTPUT({p.name}, {tt(p)})")
    ge_attr = {v: k for k, v in ATTR_TYPES.items()}
    for a in info.attrs:
        if a.default is None:
            lines.append(f"    .REQUIRED_ATTR({a.name}, {ge_attr.get(a.type, 'Float')})")
        else:
            d = {"true": "true", "false": "false"}.get(str(a.default).lower(), a.default)
            lines.append(f"    .ATTR({a.name}, {ge_attr.get(a.type, 'Float')}, {d})")
    lines += [f"    .OP_END_FACTORY_REG({T})", "}  // namespace ge", "#endif", ""]
    header = "\n".join(lines)
    body = [f'#include "{T.lower()}.h"', "", "namespace ge {", f"IMPLEMT_COMMON_INFERFUNC({T}InferShape)", "{"]
    for out, src in same_shape_as.items():
        body += [f'    TensorDesc {out}_desc = op.GetOutputDescByName("{out}");',
                 f'    TensorDesc {src}_in = op.GetInputDescByName("{src}");',
                 f"    {out}_desc.SetShape({src}_in.GetShape());",
                 f"    {out}_desc.SetDataType({src}_in.GetDataType());",
                 f'    if (op.UpdateOutputDesc("{out}", {out}_desc) != GRAPH_SUCCESS) {{ return GRAPH_FAILED; }}']
    body += ["    return GRAPH_SUCCESS;", "}", f"COMMON_INFER_FUNC_REG({T}, {T}InferShape);", "}  // namespace ge", ""]
    return header, "\n".join(body)
