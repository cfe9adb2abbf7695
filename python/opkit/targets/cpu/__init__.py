"""Target ``cpu`` (the default and the host target): the AscendC CPU emulator.

Per op: kernel modules ``kernel_<tag>[_naive].so`` and a torch library ``libopkit_<op>.so`` holding
the schema, CPU, Meta and Autocast kernels (docs/architecture.md "Emulator target"). builder.py drives
CMake + Ninja over templates/ and cmake/opkit_cpu.cmake.
"""
from __future__ import annotations

from pathlib import Path

from .builder import (TARGET, available, binding_plan, build, emulator_cflags, kernel_defines,  # noqa: F401
                      kernel_module, library, torch_paths)

NAME = TARGET
TEMPLATES = Path(__file__).resolve().parent / "templates"
CMAKE = Path(__file__).resolve().parent / "cmake"


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
    return [click.Option(["--dtype"], multiple=True, metavar="DTYPE",
                         help="edit loop: build only this lead dtype's kernels (float32/fp32, float16/fp16, "
                              "bfloat16/bf16; repeatable), then `opkit test --dtype` it")]
