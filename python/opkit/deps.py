"""The ops an op needs besides itself: its backward op (op.yaml ``backward.op``, which autograd and opcheck
call) and the opkit ops its reference.py calls (``torch.ops.opkit.<name>``), transitively.

`opkit build OP` builds these with OP; `opkit test OP` names a missing one once and fails only the cases
that need it (opcheck, which runs autograd).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .opspec import OpSpec

_CALL = re.compile(r"torch\.ops\.opkit\.(\w+)")


@dataclass(frozen=True)
class Need:
    op: str          # snake name of the op needed
    by: str          # snake name of the op that needs it
    why: str         # "its backward op (op.yaml backward.op)" | "called by its reference.py"


def direct(spec: OpSpec) -> list[Need]:
    """What ``spec`` itself needs, in a stable order (backward op first)."""
    out: list[Need] = []
    if spec.backward is not None and spec.backward.op != spec.snake:
        out.append(Need(spec.backward.op, spec.snake, "its backward op (op.yaml backward.op)"))
    ref = spec.reference_file
    if ref.is_file():
        for name in _CALL.findall(ref.read_text(errors="replace")):
            if name != spec.snake and all(n.op != name for n in out):
                out.append(Need(name, spec.snake, "called by its reference.py"))
    return out


def closure(specs: list[OpSpec], lookup: Callable[[str], OpSpec | None]) -> tuple[list[Need], list[Need]]:
    """Every op the ``specs`` need, transitively: (found, unknown). ``lookup(snake)`` gives the spec of an
    op by name (workspace first, then bundled) or None. Ops among ``specs`` are not listed."""
    have = {s.snake for s in specs}
    found: list[Need] = []
    unknown: list[Need] = []
    todo = list(specs)
    while todo:
        spec = todo.pop(0)
        for need in direct(spec):
            if need.op in have:
                continue
            have.add(need.op)
            dep = lookup(need.op)
            if dep is None:
                unknown.append(need)
            else:
                found.append(need)
                todo.append(dep)
    return found, unknown
