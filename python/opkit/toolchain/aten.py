"""aten operator names: a user's spelling (``aten::hypot``, ``hypot``, ``aten.add.Tensor``) to its OpOverload,
and back to the spelling of native_functions.yaml (``add.Tensor``) and torch_npu's messages (``aten::add.Tensor``)."""
from __future__ import annotations

import torch

from ..errors import OpkitError


def resolve(aten: str) -> torch._ops.OpOverload:
    """``aten::hypot``, ``aten::hypot.default``, ``hypot``, ``aten.add.Tensor`` -> the OpOverload."""
    text = aten.strip().replace("::", ".")
    parts = text.split(".")
    if parts[0] != "aten":
        parts = ["aten", *parts]
    if len(parts) not in (2, 3):
        raise OpkitError(f"--from-aten {aten}: expected aten::op or aten::op.overload")
    packet = getattr(torch.ops.aten, parts[1], None)
    if packet is None:
        raise OpkitError(f"--from-aten {aten}: torch {torch.__version__} has no aten op {parts[1]}")
    overload = parts[2] if len(parts) == 3 else "default"
    if overload not in packet.overloads():
        raise OpkitError(f"--from-aten {aten}: no overload {overload!r}; it has: {', '.join(packet.overloads())}")
    return getattr(packet, overload)


def yaml_name(op: torch._ops.OpOverload) -> str:
    """``aten.add.Tensor`` -> ``add.Tensor``; default overloads are bare (``lgamma``), as in the yaml."""
    base = op._schema.name.split("::", 1)[-1]
    return base if op._overloadname == "default" else f"{base}.{op._overloadname}"


def qualified(op: torch._ops.OpOverload) -> str:
    """``aten::add.Tensor``, ``aten::lgamma`` (the spelling of torch_npu's fallback warning, minus .default)."""
    return f"{op.namespace}::{yaml_name(op)}"
