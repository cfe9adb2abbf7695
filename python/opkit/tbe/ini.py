"""TBE op-info: the ``.ini`` a custom op project keeps per SoC (``tbe/op_info_cfg/ai_core/<soc>/<op>.ini``)
and the ``aic-<soc>-ops-info.json`` the build makes of it. Read both; write the ``.ini`` for --package.

Format (CANN's TBE op-info docs; Ascend/samples custom_op .ini files): ``[OpType]`` opens a section;
lines ``field.key=value``, split at the first ``.``; ``inputN``/``outputN`` carry ``name``,
``paramType``, ``dtype`` and ``format`` (equal-length lists paired by position); ``attr.list`` names
the attrs, each described by ``attr_<name>.type/.value/.paramType/.defaultValue``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OpkitError

INI_DTYPES = {"float16": "float16", "float": "float32", "float32": "float32", "bfloat16": "bfloat16",
              "int32": "int32", "int64": "int64", "int8": "int8", "uint8": "uint8", "bool": "bool",
              "int16": "int16"}


@dataclass
class Param:
    name: str
    param_type: str = "required"        # required | optional | dynamic
    dtypes: list[str] = field(default_factory=list)   # opkit dtype names, one per supported combination
    formats: list[str] = field(default_factory=list)


@dataclass
class Attr:
    name: str
    type: str                            # the .ini type: float, int, bool, str, listInt ...
    param_type: str = "optional"
    default: str | None = None


@dataclass
class OpInfo:
    op_type: str
    inputs: list[Param]
    outputs: list[Param]
    attrs: list[Attr]
    op_file: str | None = None
    op_interface: str | None = None
    source: str = ""
    raw: dict = field(default_factory=dict)


def read(path: str | Path) -> dict[str, OpInfo]:
    """Op type -> OpInfo from an .ini or an ops-info .json."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise OpkitError(f"{path}: cannot read the op-info file ({e})") from None
    sections = _json_sections(path, text) if path.suffix == ".json" else _ini_sections(path, text)
    return {t: _op_info(path, t, fields) for t, fields in sections.items()}


def _ini_sections(path: Path, text: str) -> dict[str, dict[str, dict[str, str]]]:
    out: dict[str, dict[str, dict[str, str]]] = {}
    cur = None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            cur = out.setdefault(m[1], {})
            continue
        if cur is None or "=" not in line or "." not in line.split("=", 1)[0]:
            raise OpkitError(f"{path}:{n}: expected `[OpType]` or `field.key=value`, got {line!r}")
        key, value = line.split("=", 1)
        section, _, sub = key.strip().partition(".")
        if sub in cur.setdefault(section, {}):
            raise OpkitError(f"{path}:{n}: duplicate key {key.strip()!r} (the op project's build rejects it too)")
        cur[section][sub] = value.strip()
    return out


def _json_sections(path: Path, text: str) -> dict[str, dict[str, dict[str, str]]]:
    try:
        data = json.loads(text)
    except ValueError as e:
        raise OpkitError(f"{path}: not valid JSON ({e})") from None
    return {t: {k: {kk: str(vv) for kk, vv in v.items()} for k, v in body.items() if isinstance(v, dict)}
            for t, body in data.items() if isinstance(body, dict)}


def _op_info(path: Path, op_type: str, f: dict[str, dict[str, str]]) -> OpInfo:
    def params(kind: str) -> list[Param]:
        out = []
        for i in range(64):
            s = f.get(f"{kind}{i}")
            if s is None:
                break
            if "name" not in s or "paramType" not in s:
                raise OpkitError(f"{path}: [{op_type}] {kind}{i} lacks name or paramType")
            dtypes = [INI_DTYPES.get(d.strip().lower(), d.strip().lower()) for d in s.get("dtype", "").split(",")
                      if d.strip()]
            formats = [x.strip() for x in s.get("format", "").split(",") if x.strip()]
            out.append(Param(s["name"], s["paramType"], dtypes, formats))
        return out

    attrs = []
    names = [a.strip() for a in f.get("attr", {}).get("list", "").split(",") if a.strip()]
    for a in names:
        s = f.get(f"attr_{a}", {})
        attrs.append(Attr(a, s.get("type", "float"), s.get("paramType", "optional"), s.get("defaultValue")))
    return OpInfo(op_type, params("input"), params("output"), attrs, f.get("opFile", {}).get("value"),
                  f.get("opInterface", {}).get("value"), str(path), f)


def pick(infos: dict[str, OpInfo], impl: Path, op_type: str | None) -> OpInfo | None:
    """The section for this implementation: by --op, else by opFile/opInterface = file stem, else the
    only one."""
    if op_type:
        if op_type not in infos:
            raise OpkitError(f"op-info has no [{op_type}] section (has: {', '.join(list(infos)[:20])})")
        return infos[op_type]
    stem = Path(impl).stem
    hits = [i for i in infos.values() if stem in (i.op_file, i.op_interface)] or \
        [i for i in infos.values() if not i.op_file and cann_snake(i.op_type) == stem]
    if len(hits) == 1:
        return hits[0]
    return next(iter(infos.values())) if len(infos) == 1 else None


def cann_snake(op_type: str) -> str:
    """CANN's OpType -> implementation file/function name: AbcDef -> abc_def, ABCDef -> abc_def,
    Abc2DEf -> abc2d_ef, Abc2DEF -> abc2def (TBE op development guide, "op implementation naming")."""
    s = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", op_type)
    return re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s).lower()


def write(info: OpInfo) -> str:
    """The .ini text for a custom op project (one section)."""
    lines = [f"[{info.op_type}]"]
    rev = {"float32": "float"}
    for kind, ps in (("input", info.inputs), ("output", info.outputs)):
        for i, p in enumerate(ps):
            lines += [f"{kind}{i}.name={p.name}", f"{kind}{i}.dtype=" + ",".join(rev.get(d, d) for d in p.dtypes),
                      f"{kind}{i}.format=" + ",".join(p.formats or ["ND"] * len(p.dtypes)),
                      f"{kind}{i}.shape=all", f"{kind}{i}.paramType={p.param_type}"]
    if info.attrs:
        lines.append("attr.list=" + ",".join(a.name for a in info.attrs))
        for a in info.attrs:
            lines += [f"attr_{a.name}.type={a.type}", f"attr_{a.name}.value=all",
                      f"attr_{a.name}.paramType={a.param_type}"]
            if a.default is not None:
                lines.append(f"attr_{a.name}.defaultValue={a.default}")
    lines += [f"opFile.value={info.op_file}", f"opInterface.value={info.op_interface}"]
    return "\n".join(lines) + "\n"
