"""`opkit build` for TBE op folders: what the device's op compiler would reject fails here.

Per op: the import check (unsupported APIs, file:line), then the op function run for every dtype of
op.yaml on a small shape (the dtype table per SoC, shape rules, tensor_list, output dtype), then a
manifest the loader registers from. No compiler is involved: the graph runs in Python.
"""
from __future__ import annotations

import time
from pathlib import Path

import torch

from ..toolchain.stamps import write_stamp
from ..toolchain.tools import Log
from ..errors import BuildError, OpkitError
from ..opspec import OpSpec
from . import register, runner
from .graph import TbeError

SMALL = 16


def small_inputs(spec: OpSpec, dtype: str) -> list[torch.Tensor]:
    """One small input set: named dims SMALL, "..." one dim of 2, ints as written."""
    g = torch.Generator().manual_seed(0)
    out = []
    for i in spec.inputs:
        shape = []
        for tok in i.shape:
            if tok == "...":
                shape.append(2)
            elif isinstance(tok, int):
                shape.append(tok)
            else:
                shape.append(SMALL)
        t = torch.randn(shape, generator=g, dtype=torch.float64)
        dt = getattr(torch, dtype)       # other inputs take the lead's dtype (as the binding casts them)
        out.append(t.to(dt) if dt.is_floating_point else t.round().to(dt))
    return out


def check(spec: OpSpec) -> dict:
    """Import the kernel and run it per dtype (and naive variant); dtype -> 'ok'. Raises BuildError."""
    try:
        op = runner.TbeOp(spec)
        runner._ops[str(spec.dir)] = op
    except OpkitError as e:
        raise BuildError(f"opkit build {spec.snake} (TBE): {e}") from None
    attrs = {a.name: a.default for a in spec.attrs if a.default is not None}
    checked = {}
    for dtype in spec.dtypes:
        for naive in (False, True):
            try:
                op(small_inputs(spec, dtype), attrs, naive=naive)
            except (TbeError, OpkitError) as e:
                what = "naive variant, " if naive else ""
                raise BuildError(f"opkit build {spec.snake} (TBE, {what}{dtype}, SoC {runner.soc_of(spec)}): "
                                 f"{e}") from None
            except Exception as e:  # noqa: BLE001 - the user's Python code failed: say where
                import traceback
                tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-4))
                raise BuildError(f"opkit build {spec.snake} (TBE, {dtype}): the op function raised "
                                 f"{type(e).__name__}: {e}\n{tb}") from None
        checked[dtype] = "ok"
    return checked


def build(specs: list[OpSpec], build_dir: Path, *, log: Log, target: str) -> None:
    for spec in specs:
        t0 = time.perf_counter()
        checked = check(spec)
        register.write_manifest(build_dir, spec, checked)
        write_stamp(spec, Path(build_dir) / spec.snake, target)
        log(f"checked TBE op {spec.snake} on {runner.soc_of(spec)} ({', '.join(checked)}) in "
            f"{time.perf_counter() - t0:.1f} s")
