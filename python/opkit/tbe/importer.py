"""`opkit import-tbe IMPL.py [--ini OPINFO] [--proto PROTO.h]`: wrap an existing TBE implementation into
an op folder: op.yaml from the op-info and prototype (else from the op function's ``check_op_params``
decorator and signature), the implementation copied unchanged as kernel.py, the op-info kept next to
it, and a reference.py (from a torch function named with --reference, else one to fill in)."""
from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import OpkitError
from ..opspec.names import check_op_name
from ..toolchain.user_code import reference_py
from ..workspace import MARKER, find_workspace
from . import ini as ini_mod
from . import proto as proto_mod
from .ini import Attr, OpInfo, Param

FLOATS = ("float16", "float32", "bfloat16")
ATTR_TYPES = {"float": "float", "int": "int", "bool": "bool", "str": "str", "string": "str"}
_KINDS = {"REQUIRED_INPUT": "in", "OPTION_INPUT": "in", "REQUIRED_OUTPUT": "out", "OPTION_OUTPUT": "out",
          "DYNAMIC_INPUT": "dyn", "DYNAMIC_OUTPUT": "dyn", "KERNEL_NAME": "kernel"}


@dataclass
class Imported:
    op_dir: Path
    op_type: str
    function: str
    notes: list[str]


def _decorated(impl: Path, fname: str | None) -> tuple[str | None, OpInfo | None, str | None]:
    """From the source: (op function, OpInfo from check_op_params + signature, op type from
    register_op_compute / register_operator / fusion_manager.register)."""
    tree = ast.parse(impl.read_text(), filename=str(impl))
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    op_type = None
    for n in funcs.values():
        for d in n.decorator_list:
            if isinstance(d, ast.Call) and d.args and isinstance(d.args[0], ast.Constant) and \
                    getattr(d.func, "attr", getattr(d.func, "id", "")) in ("register_op_compute", "register_operator"):
                op_type = op_type or str(d.args[0].value)
    fname = fname if fname in funcs else impl.stem if impl.stem in funcs else None
    if fname is None:
        checked = [n for n, f in funcs.items() if any("check_op_params" in ast.unparse(d) for d in f.decorator_list)]
        fname = checked[-1] if checked else None
    if fname is None:
        return None, None, op_type
    f = funcs[fname]
    kinds = []
    for d in f.decorator_list:
        if isinstance(d, ast.Call) and "check_op_params" in ast.unparse(d.func):
            kinds = [ast.unparse(a).rsplit(".", 1)[-1] for a in d.args]
    args = f.args.args
    defaults = dict(zip([a.arg for a in args[len(args) - len(f.args.defaults):]],
                        [ast.literal_eval(x) if isinstance(x, ast.Constant) else None for x in f.args.defaults]))
    inputs, outputs, attrs = [], [], []
    for i, a in enumerate(args):
        kind = kinds[i] if i < len(kinds) else ("KERNEL_NAME" if a.arg == "kernel_name" else "")
        k = _KINDS.get(kind)
        if k == "in":
            inputs.append(Param(a.arg, "optional" if kind.startswith("OPTION") else "required"))
        elif k == "out":
            outputs.append(Param(a.arg))
        elif k in ("kernel", "dyn") or a.arg == "kernel_name":
            continue
        elif "ATTR" in kind:
            t = kind.rsplit("_", 1)[-1].lower()
            attrs.append(Attr(a.arg, "listInt" if "LIST" in kind else t,
                              "optional" if kind.startswith("OPTION") else "required",
                              None if defaults.get(a.arg) is None else str(defaults[a.arg])))
    return fname, OpInfo(op_type or "", inputs, outputs, attrs), op_type


def _attr_value(a: Attr, sig_default):
    if sig_default is not None:
        return sig_default
    if a.default is None:
        return None
    t = ATTR_TYPES[a.type.lower()]
    text = str(a.default)
    return {"float": float, "int": int, "bool": lambda s: s.lower() == "true", "str": str}[t](text)


def plan(impl: Path, ini: Path | None, proto: Path | None, op_type: str | None) -> tuple[OpInfo, str, list[str]]:
    """Merge what the three sources say; returns (info, op function, notes)."""
    notes = []
    info = None
    if ini:
        info = ini_mod.pick(ini_mod.read(ini), impl, op_type)
        if info is None:
            raise OpkitError(f"{ini}: several op sections and none names {impl.stem} in opFile/opInterface; "
                             "say which with --op OpType")
    if proto:
        protos = proto_mod.read(proto)
        p = protos.get(op_type or (info.op_type if info else "")) or (next(iter(protos.values()))
                                                                    if len(protos) == 1 else None)
        if info is None:
            info = p
        elif p is not None:     # the prototype knows attr defaults the .ini may leave out
            by = {a.name: a for a in p.attrs}
            for a in info.attrs:
                if a.default is None and a.name in by:
                    a.default = by[a.name].default
    fname, from_src, src_type = _decorated(impl, info.op_interface if info else None)
    if fname is None:
        raise OpkitError(f"{impl}: no op function found (neither {impl.stem!r} nor a function decorated with "
                         "check_op_params); is this a TBE implementation file?")
    if info is None:
        info = from_src
        notes.append("no --ini/--proto: inputs, outputs and attrs read from the check_op_params decorator")
    info.op_type = op_type or info.op_type or src_type or "".join(w.title() for w in impl.stem.split("_"))
    info.op_interface = fname
    info.op_file = info.op_file or impl.stem
    return info, fname, notes


def _sig_defaults(impl: Path, fname: str) -> dict:
    tree = ast.parse(impl.read_text())
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
    args = f.args.args
    return {a.arg: ast.literal_eval(d) for a, d in zip(args[len(args) - len(f.args.defaults):], f.args.defaults)
            if isinstance(d, ast.Constant)}


def op_yaml(info: OpInfo, fname: str, impl: Path, soc: str) -> dict:
    if not info.inputs or not info.outputs:
        raise OpkitError(f"{info.source or impl}: op {info.op_type} needs at least one input and one output")
    for p in info.inputs + info.outputs:
        if p.param_type == "dynamic":
            raise OpkitError(f"{info.op_type}: {p.name} is a dynamic (variadic) input/output; op.yaml has fixed "
                             "inputs, so this op cannot be imported")
    lead = info.inputs[0]
    dtypes = [d for d in dict.fromkeys(lead.dtypes or ["float16", "float32"]) if d in FLOATS]
    if not dtypes:
        raise OpkitError(f"{info.op_type}: input {lead.name} takes no floating dtype ({', '.join(lead.dtypes)}); "
                         "the harness tests float16/bfloat16/float32 I/O")
    sig = _sig_defaults(impl, fname)
    attrs = []
    for a in info.attrs:
        if a.type.lower() not in ATTR_TYPES:
            raise OpkitError(f"{info.op_type}: attr {a.name} is {a.type}; op.yaml attrs are float, int, bool or str")
        entry = {"name": a.name, "type": ATTR_TYPES[a.type.lower()]}
        v = _attr_value(a, sig.get(a.name))
        if v is None:     # a required attr: the tests need a value; a neutral one, to be edited
            v = {"float": 1.0, "int": 1, "bool": False, "str": ""}[entry["type"]]
        entry["default"] = float(v) if entry["type"] == "float" else v
        attrs.append(entry)
    outputs = []
    taken = {p.name for p in info.inputs} | {a.name for a in info.attrs}
    for o in info.outputs:
        if o.name in taken:       # a "ref" op updating its input in place: op.yaml names must be unique
            o = Param(o.name + "_out", o.param_type, o.dtypes, o.formats)
        same = not o.dtypes or set(o.dtypes) == set(lead.dtypes) or set(o.dtypes) >= set(dtypes)
        outputs.append({"name": o.name, "dtype": lead.name if same else o.dtypes[0], "shape": lead.name})
    return {
        "op": info.op_type, "lang": "tbe", "family": "custom",
        "summary": f"TBE op {info.op_type} imported from {impl.name} by opkit import-tbe",
        "inputs": [dict({"name": p.name, "shape": ["..."]}, **({"dtypes": dtypes} if i == 0 else {}))
                   for i, p in enumerate(info.inputs)],
        "outputs": outputs, "attrs": attrs, "compute_dtype": "float32",
        "tbe": {"function": fname, "soc": soc},
        "tests": {"dims": {"...": [1, 100000]}, "max_numel": 1000000, "shapes": [[3, 5, 77], [1], [4099]],
                  "distributions": ["normal", "offset", "scale", "tiny", "mixed", "special"]},
        "accuracy": {"standard": "mere_mare"},
    }


def adopt(data: dict, other: Path) -> dict:
    """Shapes, value kinds, tests, accuracy and backward from another op's op.yaml (e.g. the AscendC op
    this TBE op is being migrated to), matched by position; names stay the TBE op's."""
    try:
        o = yaml.safe_load(Path(other).read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise OpkitError(f"--spec-from {other}: cannot read it ({e})") from None
    for kind in ("inputs", "outputs"):
        if len(o.get(kind) or []) != len(data[kind]):
            raise OpkitError(f"--spec-from {other}: it has {len(o.get(kind) or [])} {kind}, the TBE op "
                             f"{len(data[kind])}; they must match by position")
    rename = {oi["name"]: di["name"] for oi, di in zip(o["inputs"], data["inputs"])}
    for oi, di in zip(o["inputs"], data["inputs"]):
        di["shape"] = oi["shape"]
        for k in ("values", "dtypes"):
            if k in oi and (k != "dtypes" or di is data["inputs"][0]):
                di[k] = [d for d in oi[k] if d in di.get("dtypes", oi[k])] if k == "dtypes" else oi[k]
    for oo, do in zip(o["outputs"], data["outputs"]):
        do["shape"] = rename.get(oo.get("shape"), oo.get("shape"))
        do["dtype"] = rename.get(oo.get("dtype"), oo.get("dtype"))
        if "kernel_dtype" in oo:
            do["kernel_dtype"] = oo["kernel_dtype"]
    for k in ("tests", "accuracy", "family", "compute_dtype"):    # backward: autograd through the reference
        if k in o:
            data[k] = o[k]
    return data


def import_tbe(impl: str | Path, *, ini: str | Path | None = None, proto: str | Path | None = None,
               op_type: str | None = None, reference: str | None = None, soc: str = "Ascend910B",
               spec_from: str | Path | None = None, cwd: str | Path | None = None) -> Imported:
    impl = Path(impl).resolve()
    if not impl.is_file():
        raise OpkitError(f"{impl}: no such TBE implementation file")
    info, fname, notes = plan(impl, Path(ini) if ini else None, Path(proto) if proto else None, op_type)
    snake = check_op_name(info.op_type)
    data = op_yaml(info, fname, impl, soc)
    if spec_from:
        data = adopt(data, Path(spec_from))
    here = Path(cwd or Path.cwd()).resolve()
    ws = find_workspace(here) or here
    dest = ws / "ops" / snake
    if dest.exists():
        raise OpkitError(f"{dest} already exists; nothing changed (remove it or import under another --op name)")
    dest.mkdir(parents=True)
    if not (ws / MARKER).exists():
        (ws / MARKER).write_text("# opkit workspace: ops live in ops/, builds in build/opkit/\n")
    shutil.copyfile(impl, dest / "kernel.py")          # unchanged: the file CANN builds
    (dest / "op.yaml").write_text(f"# written by `opkit import-tbe {impl.name}`; edit tests/attrs as needed\n" +
                                  yaml.safe_dump(data, sort_keys=False))
    if reference and reference.endswith(".py") and Path(reference).is_file():
        shutil.copyfile(reference, dest / "reference.py")      # inputs are positional; attrs by name
    else:
        (dest / "reference.py").write_text(reference_py(info.op_type, data, reference, "opkit import-tbe"))
    (dest / f"{snake}.ini").write_text(ini_mod.write(info))
    if proto:
        shutil.copyfile(proto, dest / f"{snake}_proto.h.txt")
    return Imported(dest, info.op_type, fname, notes)
