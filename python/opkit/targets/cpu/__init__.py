"""Target ``cpu`` (the default and the host target): the AscendC CPU emulator.

Per op: kernel modules ``kernel_<tag>[_naive].so`` (each exporting the C launch ABI and the op's tiling)
and ``build.json``; opkit.registration registers the op's schema and its CPU, Meta, Autocast and Autograd
kernels from one torch-side library shared by every op (docs/architecture.md "Emulator target").
builder.py drives CMake + Ninja over the repository's cmake/ modules.
"""
from __future__ import annotations

from pathlib import Path

from .builder import (TARGET, available, build, build_module, emulator_cflags, kernel_defines,  # noqa: F401
                      kernel_module, library)

NAME = TARGET


def build_state(spec, build_dir: Path) -> str:
    from ...toolchain.stamps import build_state as stamped
    return stamped(spec, Path(build_dir) / spec.snake, library(build_dir, spec))


def load(workspace: Path | None, specs: list) -> bool:
    """The host libraries are what opkit.load() registers first; nothing more to load here."""
    return True


def prepare_test():
    """The emulator runs in the test process, on CPU tensors."""
    return None


def cli_options() -> list:
    import click
    # -k/--keep-going is the build command's own, for every target
    return [click.Option(["--dtype"], multiple=True, metavar="DTYPE",
                         help="edit loop: build only this lead dtype's kernels (float32/fp32, float16/fp16, "
                              "bfloat16/bf16; repeatable), then `opkit test --dtype` it"),
            click.Option(["--no-auto-sync"], is_flag=True, default=False)]   # the shared form: cli/options.py
