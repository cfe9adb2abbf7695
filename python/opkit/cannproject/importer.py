"""`opkit import-cann PROJECT [--op OpType] [--reference EXPR]`: a CANN custom-op project into an op folder of
this workspace, unchanged: op_host/ and op_kernel/ are copied as they are, op.yaml is written from the OpDef the
project registers (inputs, outputs, dtype columns, attrs with their defaults), reference.py from --reference."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import OpkitError
from ..opspec.names import check_op_name
from ..toolchain.user_code import reference_py
from ..workspace import MARKER, find_workspace
from . import dtypes, layout
from .host import HostRunner, build_runner

ATTR_KINDS = {"int": "int", "float": "float", "bool": "bool", "str": "str",
              "list_int": "int[]", "list_float": "float[]", "list_bool": "bool[]"}
NEUTRAL = {"float": 1.0, "int": 1, "bool": False, "str": "", "int[]": [], "float[]": [], "bool[]": []}
DYNAMIC = 3          # ParamType(DYNAMIC): a tensor list
LIST_SIZE = 2        # tensors a DYNAMIC param is tested with (op.yaml cann.lists; edit it)


def flat_names(params: list[dict]) -> list[tuple[dict, str]]:
    """(param, op.yaml name) per tensor: a DYNAMIC param as <name>_0 ... <name>_<LIST_SIZE-1>."""
    return [(p, f"{p['name']}_{i}" if p["param_type"] == DYNAMIC else p["name"])
            for p in params for i in range(LIST_SIZE if p["param_type"] == DYNAMIC else 1)]


@dataclass
class Imported:
    op_dir: Path
    op_type: str
    layout: str
    notes: list[str]


def describe(project: layout.Project, build_dir: Path) -> dict:
    runner = HostRunner(build_runner(project, build_dir), project)
    try:
        return runner.describe()
    finally:
        runner.close()


def pick_op(project: layout.Project, desc: dict, op_type: str | None) -> dict:
    ops = {o["type"]: o for o in desc["ops"]}
    if op_type:
        if op_type not in ops:
            raise OpkitError(f"{project.op_host}: no OpDef registers {op_type} (OP_ADD); registered: "
                             f"{', '.join(sorted(ops)) or 'none'}")
        return ops[op_type]
    if len(ops) != 1:
        raise OpkitError(f"{project.op_host}: {'several ops' if ops else 'no op'} registered "
                         f"({', '.join(sorted(ops)) or 'no OP_ADD'}); say which with --op OpType")
    return next(iter(ops.values()))


def op_yaml(info: dict, snake_kernel: str) -> dict:
    ins, outs = info["inputs"], info["outputs"]
    if not ins or not outs:
        raise OpkitError(f"op {info['type']}: needs at least one input and one output")
    lead = ins[0]
    cols = range(len(lead["dtypes"]))
    lead_dtypes = []
    for c in cols:
        name = dtypes.GE.get(lead["dtypes"][c], ("?",))[0]
        others = [p["dtypes"][c] if len(p["dtypes"]) > c else p["dtypes"][0] for p in ins[1:] if p["dtypes"]]
        if name in dtypes.FLOATS and all(o == lead["dtypes"][c] for o in others) and name not in lead_dtypes:
            lead_dtypes.append(name)
    if not lead_dtypes:
        raise OpkitError(f"op {info['type']}: no DataType column has a floating dtype (float16/bfloat16/float32) "
                         "shared by every input; the harness tests floating I/O of one dtype")
    in_names = flat_names(ins)
    lead_name = in_names[0][1]
    outputs = []
    for o, name in flat_names(outs):
        same = all(o["dtypes"][c if len(o["dtypes"]) > 1 else 0] == lead["dtypes"][c] for c in cols
                   if dtypes.GE.get(lead["dtypes"][c], ("?",))[0] in lead_dtypes)
        outputs.append({"name": name, "dtype": lead_name if same else dtypes.name(o["dtypes"][0]),
                        "shape": lead_name})
    attrs = []
    for a in info["attrs"]:
        if a["kind"] not in ATTR_KINDS:
            raise OpkitError(f"op {info['type']}: attr {a['name']} is {a['kind']}; op.yaml attrs are float, int, "
                             "bool, str or lists of int / float / bool")
        kind = ATTR_KINDS[a["kind"]]
        v = a["default"]
        if a["required"] or v is None:
            v = NEUTRAL[kind]     # a required attr: the tests need a value; a neutral one, to be edited
        v = float(v) if kind == "float" else [float(x) for x in v] if kind == "float[]" else \
            [bool(x) for x in v] if kind == "bool[]" else v
        attrs.append({"name": a["name"], "type": kind, "default": v})
    lists = {p["name"]: LIST_SIZE for p in ins + outs if p["param_type"] == DYNAMIC}
    return {
        "op": info["type"], "lang": "cann", "family": "custom",
        "summary": f"CANN custom op {info['type']} imported by opkit import-cann",
        "cann": {"op_type": info["type"], "kernel": f"op_kernel/{snake_kernel}", **({"lists": lists} if lists else {})},
        "inputs": [dict({"name": name, "shape": ["..."]}, **({"dtypes": lead_dtypes} if i == 0 else {}))
                   for i, (p, name) in enumerate(in_names)],
        "outputs": outputs, "attrs": attrs, "compute_dtype": "float32",
        "tests": {"dims": {"...": [1, 100000]}, "max_numel": 1000000, "shapes": [[3, 5, 77], [1], [4099]],
                  "distributions": ["normal", "offset", "scale", "tiny", "mixed", "special"]},
        "accuracy": {"standard": "mere_mare"},
    }


def import_cann(path: str | Path, *, op_type: str | None = None, reference: str | None = None,
                cwd: str | Path | None = None, opbase: str | Path | None = None) -> Imported:
    project = layout.find(path, opbase=opbase)
    here = Path(cwd or Path.cwd()).resolve()
    ws = find_workspace(here) or here
    desc = describe(project, ws / "build" / "opkit" / "cpu" / "_cann_import")
    info = pick_op(project, desc, op_type)
    kernel = project.kernel_file(info["type"])
    layout.entry(kernel, info["type"])                     # the entry must be there
    snake = check_op_name(info["type"])
    data = op_yaml(info, kernel.relative_to(project.op_kernel).as_posix())
    data["cann"].update(project.libs.as_yaml())   # an ops-math / ops-nn op keeps its libraries (libs.py)
    if not project.a2_auto_sync():    # its CMakeLists builds the A2 kernel with AUTO_SYNC false
        data["auto_sync"] = False
    dest = ws / "ops" / snake
    if dest.exists():
        raise OpkitError(f"{dest} already exists; nothing changed (remove it or import under another --op name)")
    dest.mkdir(parents=True)
    if not (ws / MARKER).exists():
        (ws / MARKER).write_text("# opkit workspace: ops live in ops/, builds in build/opkit/\n")
    shutil.copytree(project.op_host, dest / "op_host")      # unchanged: the files CANN builds
    shutil.copytree(project.op_kernel, dest / "op_kernel")
    (dest / "op.yaml").write_text(f"# written by `opkit import-cann {project.root.name}`; edit tests/attrs as needed\n"
                                  + yaml.safe_dump(data, sort_keys=False))
    if reference and reference.endswith(".py") and Path(reference).is_file():
        shutil.copyfile(reference, dest / "reference.py")
    else:
        (dest / "reference.py").write_text(reference_py(info["type"], data, reference, "opkit import-cann"))
    notes = []
    kind = "ops-math (template-argument tiling keys)" if desc.get("tpl") else "msOpGen"
    if any(a["required"] for a in info["attrs"]):
        notes.append("required attrs got a neutral test default in op.yaml: set real values")
    if data["cann"].get("lists"):
        notes.append(f"DYNAMIC (tensor-list) params {', '.join(data['cann']['lists'])}: tested with "
                     f"{LIST_SIZE} tensors each (op.yaml inputs/outputs <name>_0 ...; cann.lists sets the count)")
    return Imported(dest, info["type"], kind, notes)
