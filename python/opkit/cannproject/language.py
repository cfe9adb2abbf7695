"""The CANN project language's entry points for the build router (opkit/build.py, ``lang: cann``): how such
ops build for a target and what the loader registers them from (docs/cann.md). The router hands over the
target package itself, so nothing here imports a target.

  cpu   build.py: the project's own host code (InferShape, TilingFunc) in a runner process, its kernel
        compiled unchanged on the emulator; a manifest (register.manifest) stands where an AscendC op has
        its torch library
"""
from __future__ import annotations

from pathlib import Path

from ..errors import BuildError

TARGETS = ("cpu",)


def build(target, specs, build_dir: Path, *, jobs=None, log, keep_going: bool = False, dtype=None,
          no_auto_sync: bool = False, **options) -> None:
    if target.NAME != "cpu":
        raise BuildError(f"CANN project ops ({', '.join(s.snake for s in specs)}) build for target(s) "
                         f"{', '.join(TARGETS)}, not {target.NAME} (docs/cann.md)")
    if options:
        raise BuildError(f"target cpu takes no options ({', '.join(sorted(options))})")
    if no_auto_sync:  # the kernels are compiled per case at run time (op.py), from the op.yaml alone
        raise BuildError(f"--no-auto-sync: CANN project ops ({', '.join(s.snake for s in specs)}) compile their "
                         "kernels when they run; set `auto_sync: false` in their op.yaml instead (docs/cann.md)")
    from .build import build as build_cpu
    build_cpu(specs, Path(build_dir), log=log, target=target.NAME)


def library(target: str, build_dir: Path, spec) -> Path | None:
    """What the loader registers a CANN project op from on ``target``; None: the target's own library."""
    if target == "cpu":
        from .register import manifest
        return manifest(build_dir, spec)
    return None


def register(spec, path: Path) -> None:
    """How `opkit.load()` registers a built CANN project op (torch.library, from Python: register.py)."""
    from .register import register as register_cann
    register_cann(spec, path)
