"""``opkit.load(..., override_aten=True)``: an op scaffolded from an aten op becomes that aten op's
PrivateUse1 kernel, so the ported model calls it without edits.

Registration order on a device (docs/scan.md "Override"):
1. ``import torch`` autoloads torch_npu (entry point ``torch.backends``); libtorch_npu.so's static initialisers
   register ``TORCH_LIBRARY_IMPL(aten, PrivateUse1)`` kernels for the ops in its yaml and the boxed CPU
   fallback ``TORCH_LIBRARY_IMPL(_, PrivateUse1)``.
2. ``opkit.load(override_aten=True)`` loads the opkit ops, then registers, for each workspace op whose
   ``.opkit-scaffold.yaml`` names an aten op, a PrivateUse1 kernel for that exact overload which calls
   ``torch.ops.opkit.<op>``.
What wins: an operator's own kernel always beats the backend fallback, so a fallback op now runs opkit's
kernel. If torch_npu has a kernel for that overload too, the later registration (opkit's) replaces it and
PyTorch warns "Overriding a previously registered kernel"; ``clear()`` restores torch_npu's. The aten op's
Autograd kernel stays in front: backward uses the aten derivative formula.
On CPU there is no PrivateUse1 device; tests call the registered kernel with
``op._op_dk(DispatchKey.PrivateUse1, ...)`` on CPU tensors, the emulator standing in for the NPU kernel, and
`opkit scan` classifies the overridden op as supported.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .errors import OpkitError

_lib = None
_active: dict[str, str] = {}          # aten::hypot -> hypot_fp32
ANSWERS = ".opkit-scaffold.yaml"      # scaffold.ANSWERS (not imported: scaffold pulls in jinja2)


def active() -> dict[str, str]:
    """aten overloads (``aten::hypot``) with an opkit PrivateUse1 kernel in this process -> opkit op."""
    return dict(_active)


def aten_answers(op_dir: Path) -> dict | None:
    """The ``aten`` family answers recorded in an op folder, or None for other ops."""
    f = Path(op_dir) / ANSWERS
    if not f.is_file():
        return None
    try:
        rec = yaml.safe_load(f.read_text()) or {}
    except yaml.YAMLError as e:
        raise OpkitError(f"{f}: not valid YAML: {e}") from None
    data = rec.get("data") if isinstance(rec, dict) else None
    if rec.get("family") != "aten" or not isinstance(data, dict) or not data.get("aten"):
        return None
    return data


def workspace_aten_ops(ws: Path | None = None) -> dict[str, str]:
    """aten op -> workspace op scaffolded from it (built or not), for the report's "covered by" column."""
    from .workspace import find_workspace, workspace_entries
    ws = ws or find_workspace()
    out = {}
    for e in workspace_entries(ws) if ws else []:
        data = aten_answers(e.dir) if e.spec else None
        if data:
            out[data["aten"]] = e.snake
    return out


def register(spec, data: dict) -> str:
    """Make ``torch.ops.opkit.<spec.snake>`` the PrivateUse1 kernel of ``data["aten"]``."""
    import torch

    from .toolchain.aten import resolve, yaml_name

    global _lib
    op = resolve(data["aten"])
    qual = f"aten::{yaml_name(op)}"
    if _active.get(qual) == spec.snake:
        return qual
    fn = getattr(torch.ops.opkit, spec.snake)
    schema_names = [a.name for a in op._schema.arguments]
    inputs = [(i["aten"], i["name"]) for i in data.get("inputs") or []]
    attrs = [(a["aten"], a["name"]) for a in data.get("attrs") or []]
    defaults = {a.name: a.default_value for a in op._schema.arguments if a.has_default_value()}

    def kernel(*args, **kwargs):
        got = {**defaults, **dict(zip(schema_names, args)), **kwargs}
        return fn(*(got[a] for a, _ in inputs), **{n: got[a] for a, n in attrs})

    if _lib is None:
        _lib = torch.library.Library("aten", "IMPL")
    _lib.impl(yaml_name(op), kernel, "PrivateUse1")
    _active[qual] = spec.snake
    return qual


def register_loaded(specs) -> list[str]:
    """Every loaded op scaffolded from aten -> registered; returns the aten ops overridden."""
    done = []
    for spec in specs:
        data = aten_answers(spec.dir)
        if data:
            done.append(register(spec, data))
    return done


def clear() -> None:
    """Drop opkit's aten overrides (the kernels registered before, e.g. torch_npu's, come back)."""
    global _lib
    if _lib is not None:
        _lib._destroy()
    _lib = None
    _active.clear()
