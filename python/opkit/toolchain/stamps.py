"""Build stamps: ``<build>/<op>/build.json`` says what a build read (sources, torch and opkit versions,
the dtypes built), so every target can tell 'built', 'stale' or 'not built' the same way."""
from __future__ import annotations

import json
import time
from pathlib import Path

from ..opspec import OpSpec
from . import isa
from .version import __version__

STAMP = "build.json"


def source_files(spec: OpSpec) -> list[Path]:
    """Everything in the op folder a build reads (op.yaml, kernel.cpp, tiling.h and any header)."""
    return sorted(p for p in spec.dir.iterdir()
                  if p.is_file() and (p.suffix in (".yaml", ".cpp", ".h", ".hpp", ".cc", ".inc") or p == spec.kernel_file))


def stamp_data(spec: OpSpec, target: str, dtypes: list[str] | None = None) -> dict:
    """The stamp's fields but the time (cmake/opkit_emulator.cmake copies them from opkit.opinfo after a build)."""
    data = {"op": spec.name, "dir": str(spec.dir), "target": target, "opkit": __version__,
            "torch": torch_version(), "sources": [str(p) for p in source_files(spec)],
            "dtypes": [d for d in spec.dtypes if dtypes is None or d in dtypes]}
    if isa_applies(spec, target):  # the kernel modules' ISA level (toolchain/isa.py): another level's are not loaded
        data["isa"] = isa.level()
    return data


def isa_applies(spec: OpSpec, target: str | None) -> bool:
    """Whether a build's modules are compiled at the ISA level: the CPU target's AscendC ops (CMake OPKIT_ISA).
    CANN-project ops compile theirs at run time without -march (cannproject/kernel.py), TBE ops have none."""
    return target == "cpu" and spec.lang == "ascendc"


def other_level(spec: OpSpec, data: dict) -> str | None:
    """The ISA level a build's stamp ``data`` records ('' if none: an older opkit) when its modules were compiled at
    another level than this process builds for; None when the level matches or does not apply."""
    if not isa_applies(spec, data.get("target")) or data.get("isa") == isa.level():
        return None
    return data.get("isa") or ""


def write_stamp(spec: OpSpec, op_out_dir: Path, target: str, dtypes: list[str] | None = None) -> None:
    """dtypes: the lead dtypes built (a `--dtype` build); None: all of the op's."""
    op_out_dir.mkdir(parents=True, exist_ok=True)
    data = stamp_data(spec, target, dtypes) | {"time": time.time()}
    (op_out_dir / STAMP).write_text(json.dumps(data, indent=1))


def build_state(spec: OpSpec, op_out_dir: Path, library: Path) -> str:
    """'built', 'stale' (sources or torch changed since the last build) or 'not built'."""
    stamp = op_out_dir / STAMP
    if not library.is_file() or not stamp.is_file():
        return "not built"
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return "stale"
    if other_level(spec, data) is not None:
        return "not built"      # built for another ISA level (or before levels): could stop on an illegal instruction
    t = stamp.stat().st_mtime
    if data.get("torch") != torch_version() or data.get("dir") != str(spec.dir):
        return "stale"
    if any(p.stat().st_mtime > t for p in source_files(spec)):
        return "stale"
    return "built"


def built_dtypes(spec: OpSpec, op_out_dir: Path) -> list[str]:
    """The lead dtypes the last build made kernels for (all, unless it was `opkit build --dtype`)."""
    try:
        return list(json.loads((op_out_dir / STAMP).read_text()).get("dtypes", spec.dtypes))
    except (OSError, ValueError):
        return list(spec.dtypes)


def torch_version() -> str:
    """The installed torch's version, without importing torch (that takes seconds)."""
    from importlib import metadata
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        import torch
        return torch.__version__
