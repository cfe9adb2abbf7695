"""The TBE language's entry points for the build router (opkit/build.py finds them as
``opkit.<lang>.language``): how ``lang: tbe`` ops build for a target, and what the loader registers
them from and how. The router hands over the target package itself, so nothing here imports a target.

  cpu   build.py: the kernel is imported and run per dtype in Python (no compiler); a manifest
        (register.manifest) stands where an AscendC op has its torch library
  npu   package.py: the TBE flavour of the custom-op project; --check-only compiles its OpCommand
        binding with the target's check toolchain (target.check_toolchain)
"""
from __future__ import annotations

from pathlib import Path

from ..errors import BuildError

TARGETS = ("cpu", "npu")


def build(target, specs, build_dir: Path, *, jobs=None, log, keep_going: bool = False, dtype=None,
          check_only: bool = False, soc: str | None = None, **options) -> None:
    name = target.NAME
    if name == "cpu":
        from .build import build as build_cpu
        build_cpu(specs, Path(build_dir), log=log, target=name)
    elif name == "npu":
        from .package import build_npu
        toolchain = target.check_toolchain(log) if check_only else None
        build_npu(specs, Path(build_dir) / "tbe", check_only=check_only, soc=soc, log=log, toolchain=toolchain)
    else:
        raise BuildError(f"TBE ops ({', '.join(s.snake for s in specs)}) build for target(s) {', '.join(TARGETS)}, "
                         f"not {name}")


def library(target: str, build_dir: Path, spec) -> Path | None:
    """What the loader registers a TBE op from on ``target``; None: the target's own library."""
    if target == "cpu":
        from .register import manifest
        return manifest(build_dir, spec)
    return None


def register(spec, path: Path) -> None:
    """How `opkit.load()` registers a built TBE op (torch.library, from Python: register.py)."""
    from .register import register as register_tbe
    register_tbe(spec, path)
