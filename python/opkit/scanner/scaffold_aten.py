"""`opkit new NAME --from-aten aten::op.overload` and `opkit scan --scaffold`: an op folder for an aten op.

The answers for the ``aten`` template family (templates/families/aten/) come from the aten schema
(tensors -> inputs, scalars -> attrs, results -> outputs; ``self``/``input`` become ``x``) and from the
argument sets `opkit scan` saw (test shapes, values of required scalars). The op is named after the aten op
plus ``FP32`` (``aten::hypot`` -> ``HypotFP32``). Its kernel is a skeleton that builds and runs; reference.py
calls the aten op. `opkit.load(override_aten=True)` registers the built op as the aten op's PrivateUse1 kernel.
"""
from __future__ import annotations

import math
from pathlib import Path

import torch

from ..errors import OpkitError
from ..opspec.names import is_keyword
from ..toolchain.aten import resolve

_RENAME = {"self": "x", "input": "x"}
_RESERVED = {"workspace", "tiling"}


def op_name(op: torch._ops.OpOverload) -> str:
    base = op._schema.name.split("::")[-1].strip("_")
    return "".join(p[:1].upper() + p[1:] for p in base.split("_") if p) + "FP32"


def _pyname(name: str) -> str:
    name = _RENAME.get(name, name)
    return name + "_" if is_keyword(name) or name in _RESERVED else name


def answers(aten: str, examples: list[dict] | None = None) -> tuple[str, dict]:
    """(CamelCase name, answers for the ``aten`` family). ``examples``: argument sets the scan recorded
    (``{arg: {"shape": [...]}, arg: value}``); without them, one 8x64 float example is assumed."""
    op = resolve(aten)
    schema = op._schema
    qual = f"aten::{schema.name.split('::')[-1]}" + ("" if op._overloadname == "default" else f".{op._overloadname}")
    if any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
        raise OpkitError(f"{qual} writes into its arguments (in-place/out=): scaffold its functional overload")
    tensors = [a for a in schema.arguments if str(a.type) == "Tensor"]
    if not tensors:
        raise OpkitError(f"{qual}: no Tensor argument to mirror as an opkit input")
    if not examples:
        examples = [{a.name: {"shape": [8, 64]} for a in tensors}]
    examples = [e for e in examples if all(isinstance(e.get(a.name), dict) for a in tensors)] or examples
    lead = tensors[0].name
    inputs, attrs, call = [], [], []
    keywords = False
    for a in schema.arguments:
        t, py = str(a.type), _pyname(a.name)
        if t == "Tensor":
            inputs.append({"name": py, "aten": a.name})
            call.append(f"{a.name}={py}" if keywords else py)
            continue
        attr = _attr(qual, a, py, examples)
        if attr is None:             # optional argument left at its default
            keywords = True
            continue
        attrs.append(attr)
        call.append(f"{a.name}={py}" if keywords or a.kwarg_only else py)
        keywords = keywords or a.kwarg_only
    dim = next((a for a in attrs if a.get("role") == "dim"), None)
    kind = "rows" if dim else "elementwise"
    outputs = _outputs(qual, op, examples[0], lead)
    lead_shapes = _distinct([e[lead]["shape"] for e in examples])
    for i in inputs[1:]:
        if any(e[i["aten"]]["shape"] != e[lead]["shape"] for e in examples):
            raise OpkitError(f"{qual}: input {i['aten']} has another shape than {lead} in the traced calls "
                             "(broadcasting); op.yaml inputs share the lead's shape, so scaffold this op by hand")
    if kind == "rows":
        for i in inputs:
            i["shape"] = ["...", "C"]
        cols = [s[int(dim["default"])] if s else 1 for s in lead_shapes]
        rows = [max(1, math.prod(s) // c) if c else 1 for s, c in zip(lead_shapes, cols)]
        dims = {"...": [1, max(rows)], "C": [1, max(cols)]}
    else:
        for i in inputs:
            i["shape"] = ["..."]
        dims = {"...": [1, max(max(math.prod(s) for s in lead_shapes), 1)]}
    numel = max(math.prod(s) for s in lead_shapes)
    name = op_name(op)
    args = ", ".join(call)
    return name, {
        "aten": qual, "kind": kind,
        "summary": f"{qual} with FP32 compute (skeleton from opkit scan: write Compute() in kernel.cpp)",
        "inputs": inputs, "attrs": attrs, "outputs": outputs, "dims": dims,
        "shapes": [s for s in lead_shapes if s][:4],
        "max_numel": max(1_000_000, numel),
        "params": ", ".join([i["name"] for i in inputs] + [f"{a['name']}={a['py_default']}" for a in attrs]),
        "reference_call": f"torch.ops.aten.{schema.name.split('::')[-1]}.{op._overloadname}({args})",
    }


def _attr(qual: str, a, py: str, examples: list[dict]) -> dict | None:
    t = str(a.type)
    seen = examples[0].get(a.name, a.default_value)
    kinds = {"int": ("int", "int64_t", "int"), "SymInt": ("int", "int64_t", "int"),
             "float": ("float", "float", "float"), "Scalar": ("float", "float", "float"),
             "number": ("float", "float", "float"),
             "bool": ("bool", "uint8_t", "bool")}
    if t not in kinds:
        if t.startswith("Optional[") and (a.has_default_value() and a.default_value is None):
            return None
        raise OpkitError(f"{qual}: argument {a.name} of type {t} has no op.yaml attr type (float, int, bool); "
                         "scaffold this op by hand")
    typ, ctype, getter = kinds[t]
    value = seen if seen is not None else (0 if typ != "float" else 0.0)
    if isinstance(value, dict):
        raise OpkitError(f"{qual}: argument {a.name} was a tensor in the traced call")
    if typ == "float":
        value = float(value)
    elif typ == "bool":
        value = bool(value)
    else:
        value = int(value)
    role = "dim" if a.name == "dim" and typ == "int" else "keepdim" if a.name == "keepdim" and typ == "bool" else None
    if role == "dim":
        shape = next(iter(v["shape"] for v in examples[0].values() if isinstance(v, dict)))
        value = value - len(shape) if value >= 0 else value          # negative: any rank
    default = {"bool": str(value).lower(), "float": repr(value)}.get(typ, str(value))
    return {"name": py, "type": typ, "default": default, "py_default": repr(value), "role": role, "aten": a.name,
            "ctype": ctype, "getter": getter}


def _outputs(qual: str, op, example: dict, lead: str) -> list[dict]:
    """Run the op on meta tensors of the traced shapes: every result must have the lead input's shape."""
    def arg(v):
        return torch.empty(v["shape"], device="meta") if isinstance(v, dict) else v
    kwargs = {k: arg(v) for k, v in example.items() if not isinstance(v, str)}
    try:
        res = op(**kwargs)
    except Exception as e:          # noqa: BLE001 - any failure means we cannot infer the outputs
        raise OpkitError(f"{qual}: cannot infer its outputs from the traced arguments ({e})") from None
    res = res if isinstance(res, (tuple, list)) else (res,)
    names = [r.name or "" for r in op._schema.returns]
    out = []
    for i, r in enumerate(res):
        if not isinstance(r, torch.Tensor) or list(r.shape) != example[lead]["shape"] or not r.is_floating_point():
            raise OpkitError(f"{qual}: result {i} is not a floating tensor of {lead}'s shape; the aten family "
                             "mirrors same-shape ops only, so scaffold this op by hand")
        nm = _pyname(names[i]) if i < len(names) and names[i] else ("y" if i == 0 else f"y{i}")
        out.append({"name": nm})
    return out


def _distinct(items: list) -> list:
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def new_from_aten(aten: str, *, name: str | None = None, examples: list[dict] | None = None,
                  cwd: str | Path | None = None, force: bool = False):
    """Scaffold the op folder (scaffold.new with the ``aten`` family) and return the Scaffold."""
    from ..scaffold import new

    default_name, data = answers(aten, examples)
    return new(name or default_name, family="aten", force=force, cwd=cwd, data=data)


def scaffold_report(report, *, cwd: str | Path | None = None) -> list:
    """One op folder per fallback op of a ScanReport (by the op the model calls); existing folders are kept."""
    done, out = set(), []
    for r in report.fallbacks:
        entry = r.entry
        if entry in done:
            continue
        done.add(entry)
        try:
            out.append(new_from_aten(entry, examples=r.entry_args, cwd=cwd))
        except OpkitError as e:
            raise OpkitError(f"--scaffold {entry}: {e}") from None
    return out
