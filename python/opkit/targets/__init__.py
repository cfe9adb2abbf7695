"""Build targets, one package each, found by name: ``opkit.targets.<name>`` (the way tinygrad finds
``ops_<device>.py``). A package in this folder IS a target; nothing else lists them.

Every target package exposes the `Target` protocol below and carries its own ``templates/`` and
``cmake/``. ``cpu`` (the AscendC CPU emulator) is the host target: its per-op libraries hold the torch
schemas, Meta and Autocast kernels, so every other target registers only its device kernels on top.
docs/architecture.md "Targets" shows what adding a target takes.
"""
from __future__ import annotations

import functools
import importlib
import os
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Protocol

from ..errors import OpkitError

HOST = "cpu"        # the target whose libraries hold the schemas (always loaded first)


class Target(Protocol):
    """What `opkit build`, `opkit test`, `opkit list`, `opkit.load()` and the harness call on a target."""

    def available(self) -> tuple[bool, str]:
        """Can this machine build for the target; why (not). Cheap: no torch import."""

    def build(self, specs: list, build_dir: Path, *, jobs: int | None, log: Callable[[str], None],
              verbose: bool = False, **options: Any) -> None:
        """Build the ops into build_dir; raises BuildError (with the reason) on failure."""

    def library(self, build_dir: Path, spec) -> Path:
        """The torch library holding the op's kernels for this target in that build folder."""

    def build_state(self, spec, build_dir: Path) -> str:
        """'built', 'stale' or 'not built'."""

    def load(self, workspace: Path | None, specs: list) -> bool:
        """Register this target's kernels for the loaded ops (after the host libraries); False if not."""

    def prepare_test(self) -> Any:
        """Start of an `opkit test` process: the torch.device the op runs on (None: the CPU, in
        process); raises OpkitError when this machine cannot run the target."""

    def cli_options(self) -> list:
        """click.Option objects this target adds to `opkit build` (each named for this target only)."""


@functools.lru_cache(maxsize=None)
def names() -> tuple[str, ...]:
    """Every target: the sub-packages of this package, host first."""
    found = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg)
    return tuple(sorted(found, key=lambda n: n != HOST))


def default_target() -> str:
    """``cpu`` unless the environment variable OPKIT_TARGET says otherwise."""
    return os.environ.get("OPKIT_TARGET") or HOST


def get(target: str | None = None) -> ModuleType:
    """The target package by name (default: default_target())."""
    target = target or default_target()
    if target not in names():
        raise OpkitError(f"unknown target {target!r}; expected one of: {', '.join(names())} "
                         f"(a target is a package in {Path(__file__).parent})")
    return importlib.import_module(f"{__name__}.{target}")


def host() -> ModuleType:
    return get(HOST)


# Kept so `from opkit.targets import TARGETS` reads like before.
TARGETS = names()
