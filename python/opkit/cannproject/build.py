"""`opkit build` for `lang: cann` op folders: the host runner is compiled from op_host/*.cpp, then the op runs
once per dtype of op.yaml on a small shape -- its TilingFunc on the CPU context, its kernel module compiled
and launched -- so what would not build or run fails here, naming the op, dtype and cause. Other dtype
columns / template instances compile on first use (cached under build/opkit/cpu/<op>/kernels)."""
from __future__ import annotations

import time
from pathlib import Path

import torch

from ..toolchain.stamps import write_stamp
from ..toolchain.tools import Log
from ..errors import BuildError, OpkitError
from ..opspec import OpSpec
from . import register

SMALL = 16


def small_inputs(spec: OpSpec, dtype: str) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    out = []
    for i in spec.inputs:
        shape = [2 if tok == "..." else tok if isinstance(tok, int) else SMALL for tok in i.shape]
        out.append(torch.randn(shape, generator=g, dtype=torch.float64).to(getattr(torch, dtype)))
    return out


def check(spec: OpSpec, build_dir: Path) -> dict:
    attrs = {a.name: a.default for a in spec.attrs if a.default is not None}
    checked = {}
    try:
        op = register.get(spec, build_dir)
        for dtype in spec.dtypes:
            outs = register.flatten_outputs(op(register.group_inputs(op, small_inputs(spec, dtype)), attrs))
            if any(o.is_floating_point() and not torch.isfinite(o).all() for o in outs):
                raise OpkitError(f"{dtype}: the kernel left non-finite values in an output on a {SMALL}-element "
                                 "case (an output it did not write is poisoned with 0xFF bytes)")
            checked[dtype] = "ok"
    except OpkitError as e:
        raise BuildError(f"opkit build {spec.snake} (CANN project, op {register.op_type(spec)}): {e}") from None
    except Exception as e:  # noqa: BLE001 - an emulator rule or a runner failure: say which op
        raise BuildError(f"opkit build {spec.snake} (CANN project): {type(e).__name__}: {e}") from None
    return checked


def build(specs: list[OpSpec], build_dir: Path, *, log: Log, target: str) -> None:
    for spec in specs:
        t0 = time.perf_counter()
        checked = check(spec, Path(build_dir))
        register.write_manifest(build_dir, spec, checked)
        write_stamp(spec, Path(build_dir) / spec.snake, target)
        log(f"built CANN op {spec.snake} ({register.op_type(spec)}: {', '.join(checked)}) in "
            f"{time.perf_counter() - t0:.1f} s")
