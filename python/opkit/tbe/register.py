"""TBE ops as ``torch.ops.opkit.<op>`` (and ``torch.ops.opkit_naive.<op>``) on the CPU, through
torch.library: the same schema as an AscendC op of the same spec, a fake (meta) kernel from the
reference, autograd from opkit.autograd (through the reference where no backward op exists)."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import OpkitError
from ..opspec import OpSpec
from . import runner

MANIFEST = "tbe_op.json"
_libs: dict[str, torch.library.Library] = {}
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


def _library(ns: str) -> torch.library.Library:
    if ns not in _libs:
        _libs[ns] = torch.library.Library(ns, "FRAGMENT")
    return _libs[ns]


def register(spec: OpSpec, where: Path) -> None:
    """Define and implement the op in both namespaces; once per process per op."""
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

    for ns, naive in (("opkit", False), ("opkit_naive", True)):
        lib = _library(ns)
        lib.define(spec.schema())
        lib.impl(spec.snake, impl(naive), "CPU")
        torch.library.register_fake(f"{ns}::{spec.snake}", fake, lib=lib)
    _done[spec.snake] = str(spec.dir)
