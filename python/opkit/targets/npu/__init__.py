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
    from ...toolchain.stamps import source_files
    t = lib.stat().st_mtime
    return "stale" if any(p.stat().st_mtime > t for p in source_files(spec)) else "built"


def load(workspace: Path | None, specs: list) -> bool:
    """The NPU libraries, only where torch_npu is installed (nothing NPU-related is imported otherwise):
    the bundled ops' (built into the per-user cache by opkit.load() when CANN is present), unless a
    workspace op shadows one of them (one op cannot be registered twice), then the workspace's."""
    if importlib.util.find_spec("torch_npu") is None:
        return False
    bundled = [s for s in specs if getattr(s, "bundled", False)]
    if bundled:
        from ...toolchain.cache import bundled_cache_dir
        cache = bundled_cache_dir() / NAME
        held = set((cache / MANIFEST).read_text().split()) if (cache / MANIFEST).is_file() else set()
        clash = held & {s.snake for s in specs if not getattr(s, "bundled", False)}
        if held and not clash:
            load_if_available(cache, specs=bundled)
        elif clash:
            import warnings
            warnings.warn(f"opkit: the bundled ops' NPU library {cache / LIBRARY} is not loaded: workspace op(s) "
                          f"{', '.join(sorted(clash))} replace bundled ones it holds", RuntimeWarning, stacklevel=3)
    return load_if_available(workspace=workspace, specs=[s for s in specs if not getattr(s, "bundled", False)])


def check_toolchain(log=None):
    """The `--check-only` toolchain (compiler, torch and torch-npu wheel headers); the build router hands it
    to the TBE project's check (opkit/build.py), so the TBE language package never imports this target."""
    from .check import toolchain
    return toolchain(log)


STANDIN_ENV = "OPKIT_NPU_DEVICE_STANDIN"


def prepare_test():
    """The NPU device for `opkit test --target npu`. With OPKIT_NPU_DEVICE_STANDIN=cpu (tests of the
    plumbing on machines without an NPU) the CPU stands in: the run goes through this target's checks,
    build state and report, with the emulator computing what the device would."""
    import os
    if os.environ.get(STANDIN_ENV) == "cpu":
        import sys
        import torch
        print(f"opkit: {STANDIN_ENV}=cpu: the CPU stands in for the NPU (plumbing test; the results are the "
              "emulator's, not a device's)", file=sys.stderr)
        return torch.device("cpu")
    return prepare_test_process()


def cli_options() -> list:
    import click
    return [click.Option(["--check-only"], is_flag=True,
                         help="npu: render and compile-check without CANN (mirrors CANN's build steps)"),
            click.Option(["--package"], is_flag=True, help="npu: also write and build the graph-mode op package"),
            click.Option(["--soc"], default=None, help="npu: SoC version, e.g. Ascend910B3"),
            click.Option(["--no-auto-sync"], is_flag=True, default=False)]   # the shared form: cli/options.py
