"""TBE ops as ``torch.ops.opkit.<op>`` (and ``torch.ops.opkit_naive.<op>``) on the CPU, through the one
registration surface (opkit.registration): the same schema as an AscendC op of the same spec, a fake (meta)
kernel from the reference, autograd from opkit.autograd (through the reference where no backward op exists)."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import OpkitError
from ..opspec import OpSpec
from . import runner

MANIFEST = "tbe_op.json"
_done: dict[str, str] = {}


def manifest(build_dir: Path, spec: OpSpec) -> Path:
    """What ``library()`` names for a TBE op: a small JSON written by the build (no .so to load)."""
    return Path(build_dir) / spec.snake / MANIFEST


def write_manifest(build_dir: Path, spec: OpSpec, checked: dict) -> Path:
    path = manifest(build_dir, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"op": spec.snake, "lang": "tbe", "kernel": str(runner.kernel_path(spec)),
                                "soc": runner.soc_of(spec), "checked": checked}, indent=1))
    return path


def register(spec: OpSpec, where: Path) -> None:
    """Register the op through opkit.registration: the DSL emulation as its CPU kernel (opkit and
    opkit_naive), a fake kernel from the reference's output shapes. Once per process per op."""
    from .. import registration

    if spec.snake in _done:
        if _done[spec.snake] != str(spec.dir):
            raise OpkitError(f"opkit.load: TBE op {spec.snake} is already registered from {_done[spec.snake]}")
        return
    op = runner.get(spec)
    attr_names = [a.name for a in spec.attrs]
    n_in = len(spec.inputs)

    def impl(naive: bool):
        def kernel(*args):
            inputs, attrs = list(args[:n_in]), dict(zip(attr_names, args[n_in:]))
            outs = op(inputs, attrs, naive=naive)
            return outs[0] if len(outs) == 1 else tuple(outs)
        return kernel

    def fake(*args):
        inputs, attrs = list(args[:n_in]), dict(zip(attr_names, args[n_in:]))
        metas = op._out_meta(inputs, attrs)
        outs = [inputs[0].new_empty(s, dtype=getattr(torch, d)) for s, d in metas]
        return outs[0] if len(outs) == 1 else tuple(outs)

    registration.register_python(spec, impl(False), impl(True), fake)
    _done[spec.snake] = str(spec.dir)
