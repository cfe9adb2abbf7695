"""`opkit scan`: which ops of a model torch_npu would run on the CPU, and which lose precision under AMP.

``opkit.scan(model, inputs)`` traces the model on the CPU for each example input (trace.py), classifies every
backend-level op against the torch-npu wheel's op list (oplist.py, classify.py), and returns a
``ScanReport`` (report.py). ``scaffold_aten.py`` turns a fallback op into an opkit op folder;
``opkit/aten_override.py`` registers such an op as the aten op's PrivateUse1 kernel. Method and limits: docs/scan.md.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .oplist import DEFAULT_VERSION, OpList
from .report import OpRecord, ScanReport

__all__ = ["scan", "ScanReport", "OpRecord", "OpList"]


def scan(model: Callable, inputs: Iterable, *, torch_npu: str | OpList = DEFAULT_VERSION, amp: str | None = None,
         backward: bool = False, fake: bool = False, op_list: str | Path | None = None,
         progress: Callable[[str], None] | None = None) -> ScanReport:
    """Trace ``model`` on each example input (a tensor, or a tuple of arguments) and classify its ops.

    ``torch_npu``: the torch-npu version whose wheel gives the op list (downloaded once, never installed), or
    an ``OpList``; ``op_list``: a file instead (offline); ``amp="npu-o1"``: apply torch_npu's autocast table
    and mark precision-sensitive ops; ``backward``: also trace backward of sum(outputs); ``fake``: trace
    with FakeTensors (shapes only, forward only).
    """
    from .. import aten_override as override
    from . import oplist, trace
    from .report import assemble

    inputs = list(inputs)
    if not inputs:
        raise ValueError("opkit.scan: give at least one example input")
    ops = oplist.resolve(torch_npu, op_list, log=progress)
    calls = trace.trace(model, inputs, ops, overrides=override.active(), amp=amp, backward=backward, fake=fake,
                        progress=progress)
    tags = [trace.shape_tag(trace._as_args(i)) for i in inputs]
    return assemble(calls, torch_npu=ops.version, op_list=ops.source, inputs=tags, amp=amp, backward=backward,
                    workspace_ops=override.workspace_aten_ops())
