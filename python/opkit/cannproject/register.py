"""CANN project ops as ``torch.ops.opkit.<op>`` (and ``opkit_naive``, the same kernel: a CANN kernel has one
precision) on the CPU through opkit.registration, as TBE ops are registered (opkit/tbe/register.py): the schema
from op.yaml, a fake kernel from the op's InferShape / InferDataType (run by the host runner), autograd from
opkit.autograd."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import OpkitError
from ..opspec import OpSpec
from . import dtypes, layout
from .libs import Libraries, libraries
from .op import CannOp

MANIFEST = "cann_op.json"
PROFILE = "ascend910b"
_done: dict[str, str] = {}
_ops: dict[str, CannOp] = {}


def manifest(build_dir: Path, spec: OpSpec) -> Path:
    return Path(build_dir) / spec.snake / MANIFEST


def project_of(spec: OpSpec) -> layout.Project:
    """The op folder as a project, with the CANN libraries op.yaml's cann.repo / cann.opbase name (libs.py)."""
    libs = libraries(spec.dir, spec.cann.get("opbase"), spec.cann.get("repo")) if (
        spec.cann.get("opbase") or spec.cann.get("repo")) else Libraries()
    return layout.Project(spec.dir, spec.dir / "op_host", spec.dir / "op_kernel", libs)


def op_type(spec: OpSpec) -> str:
    return spec.cann.get("op_type") or spec.name


def get(spec: OpSpec, build_dir: Path) -> CannOp:
    key = str(spec.dir)
    if key not in _ops:
        _ops[key] = CannOp(project_of(spec), op_type(spec), Path(build_dir) / spec.snake, PROFILE,
                           auto_sync=spec.auto_sync)
        _ops[key].list_sizes = dict(spec.cann.get("lists") or {})   # DYNAMIC params: tensors each (importer.py)
    return _ops[key]


def group_inputs(op: CannOp, flat: list) -> list:
    """op.yaml's inputs (a DYNAMIC input imported as <name>_0 ... <name>_<n-1>, importer.py) as the op takes
    them: one entry per IR input, a list of tensors for a DYNAMIC one."""
    want = sum(op.list_sizes.get(p["name"], 0) if dyn else 1 for p, dyn in zip(op.info["inputs"], op.dynamic()))
    if len(flat) != want:
        raise OpkitError(f"op {op.op_type}: {len(flat)} inputs, but its OpDef with op.yaml's cann.lists "
                         f"{op.list_sizes} takes {want} (a DYNAMIC input is <name>_0 ... <name>_<n-1>)")
    it, out = iter(flat), []
    for p, dyn in zip(op.info["inputs"], op.dynamic()):
        out.append([next(it) for _ in range(op.list_sizes.get(p["name"], 0))] if dyn else next(it))
    return out


def flatten_outputs(outs: list) -> list:
    return [t for o in outs for t in (o if isinstance(o, list) else [o])]


def write_manifest(build_dir: Path, spec: OpSpec, checked: dict) -> Path:
    path = manifest(build_dir, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"op": spec.snake, "lang": "cann", "op_type": op_type(spec), "profile": PROFILE,
                                "kernel": str(spec.kernel_file), "checked": checked}, indent=1))
    return path


def register(spec: OpSpec, where: Path) -> None:
    if spec.snake in _done:
        if _done[spec.snake] != str(spec.dir):
            raise OpkitError(f"opkit.load: CANN op {spec.snake} is already registered from {_done[spec.snake]}")
        return
    build_dir = Path(where).parent.parent
    attr_names = [a.name for a in spec.attrs]
    n_in = len(spec.inputs)

    def kernel(*args):
        op = get(spec, build_dir)
        outs = flatten_outputs(op(group_inputs(op, list(args[:n_in])), dict(zip(attr_names, args[n_in:]))))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def fake(*args):
        ins = args[:n_in]
        if all(isinstance(d, int) for t in ins if t is not None for d in t.shape):
            # concrete shapes: the op's own InferShape / InferDataType (run in the host runner)
            op = get(spec, build_dir)
            r = op.tiling(group_inputs(op, [None if t is None else torch.empty(t.shape, dtype=t.dtype) for t in ins]),
                          dict(zip(attr_names, args[n_in:])))
            metas = [(o["shape"], getattr(torch, dtypes.name(o["dtype"]))) for o in r["outputs"]]
        else:   # symbolic shapes cannot reach the runner: op.yaml's rule (an output shaped like an input)
            by = {i.name: t for i, t in zip(spec.inputs, ins)}
            metas = [(by[o.shape].shape, by[o.dtype].dtype if o.dtype in by else getattr(torch, o.dtype))
                     for o in spec.outputs]
        outs = [ins[0].new_empty(s, dtype=d) for s, d in metas]
        return outs[0] if len(outs) == 1 else tuple(outs)

    from .. import registration
    registration.register_python(spec, kernel, kernel, fake)
    _done[spec.snake] = str(spec.dir)
