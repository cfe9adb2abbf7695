"""Target ``npu``: the same kernel.cpp and tiling.h built with CANN for an Ascend NPU and registered
for torch_npu (PrivateUse1) in one library per build, ``libopkit_npu.so`` (docs/npu.md).

builder.py drives the build; cann.py finds CANN and the SoC; glue.py renders templates/; check.py and
wheel.py are `--check-only` (no CANN: the torch-npu wheel's headers); package.py is `--package`
(graph mode). Imported by opkit.load() and the CLI on every machine: nothing heavy at import time,
and torch_npu only when asked to load the library.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from .builder import (LIBRARY, MANIFEST, available, build, library, load_if_available,  # noqa: F401
                      prepare_test_process, recheck)

NAME = "npu"


def build_state(spec, build_dir: Path) -> str:
    """One library for all ops: 'built' when it holds the op (manifest) and is newer than its sources."""
    lib = library(build_dir)
    manifest = Path(build_dir) / MANIFEST
    if not lib.is_file() or not manifest.is_file() or spec.snake not in manifest.read_text().split():
        return "not built"
    from ...build import source_files
    t = lib.stat().st_mtime
    return "stale" if any(p.stat().st_mtime > t for p in source_files(spec)) else "built"


def load(workspace: Path | None, specs: list) -> bool:
    """The NPU library, only where torch_npu is installed (nothing NPU-related is imported otherwise)."""
    if importlib.util.find_spec("torch_npu") is None:
        return False
    return load_if_available(workspace=workspace, specs=specs)


def prepare_test():
    return prepare_test_process()


def cli_options() -> list:
    import click
    return [click.Option(["--check-only"], is_flag=True,
                         help="npu: render and compile-check without CANN (mirrors CANN's build steps)"),
            click.Option(["--package"], is_flag=True, help="npu: also write and build the graph-mode op package"),
            click.Option(["--soc"], default=None, help="npu: SoC version, e.g. Ascend910B3")]
