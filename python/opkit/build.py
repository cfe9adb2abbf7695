"""`opkit build` and the build router: which code builds, finds and stamps an op, by (language x target).

An op's kernel language (op.yaml ``lang:``) and the build target pick the code that handles it:

  ascendc x any target   opkit.targets.<target>: build, library, build_state (the Target protocol)
  <lang>  x any target   opkit.<package>.language (LANGUAGES below): build(target, specs, ...), library(target,
                         ...), register(spec, path) -- tbe/language.py (cpu, npu), cannproject/language.py (cpu)

Targets and languages never import each other (a language's build() is handed the target package); this
module is the one place that joins them, and everything above it (loader, harness, CLI) asks it, not a
target, for an op's library and build state.
docs/architecture.md "Layers" says how to add a target or a language.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Iterable

from . import targets
from .errors import OpkitError
from .opspec import OpSpec
from .toolchain import stamps
from .toolchain.tools import Log
from .workspace import build_dir as _build_dir
from .workspace import require_workspace, workspace_specs


def build(ops: Iterable[str] = (), *, workspace: str | Path | None = None, target: str | None = None,
          jobs: int | None = None, verbose: bool = False, log: Log | None = None, **options) -> list[OpSpec]:
    """Build the workspace's ops (all, or those named) for a target; returns the specs built."""
    ws = require_workspace(workspace)
    specs = workspace_specs(ws, tuple(ops))
    if not specs:
        raise OpkitError(f"workspace {ws} has no ops (ops/<op>/op.yaml); run `opkit new <OpName>`")
    name = targets.get(target).NAME
    # each builder says itself when this machine cannot build for the target (options may not need all)
    build_specs(specs, _build_dir(ws, name), target=name, jobs=jobs, verbose=verbose, log=log, **options)
    return specs


def build_specs(specs: list[OpSpec], build_dir: Path, *, target: str | None = None, jobs: int | None = None,
                verbose: bool = False, log: Log | None = None, **options) -> None:
    """Build ``specs`` into ``build_dir`` for ``target``: the ops of other languages first, each by its
    language package (TBE needs no compiler), then the AscendC ops by the target. Raises BuildError."""
    backend = targets.get(target)
    log = log or (lambda s: None)
    by_lang: dict[str, list[OpSpec]] = {}
    for s in specs:
        by_lang.setdefault(s.lang, []).append(s)
    for lang, group in by_lang.items():
        if lang != ASCENDC:
            language(lang).build(backend, group, Path(build_dir), jobs=jobs, log=log, **options)
    if by_lang.get(ASCENDC):
        backend.build(by_lang[ASCENDC], build_dir, jobs=jobs, log=log, verbose=verbose, **options)


def library(target: str, build_dir: Path, spec: OpSpec) -> Path:
    """What `opkit.load()` registers the op from, built for ``target`` in ``build_dir``."""
    own = language(spec.lang).library(target, build_dir, spec) if spec.lang != ASCENDC else None
    return own if own is not None else targets.get(target).library(build_dir, spec)


def build_state(target: str, spec: OpSpec, build_dir: Path) -> str:
    """'built', 'stale' (sources or torch changed since) or 'not built'."""
    own = language(spec.lang).library(target, build_dir, spec) if spec.lang != ASCENDC else None
    if own is not None:
        return stamps.build_state(spec, Path(build_dir) / spec.snake, own)
    return targets.get(target).build_state(spec, build_dir)


ASCENDC = "ascendc"     # the targets' own language: every target builds it
# Every other kernel language (op.yaml `lang:`) -> its package, whose language.py the router calls.
LANGUAGES = {"tbe": "tbe", "cann": "cannproject"}


def language(lang: str) -> ModuleType:
    """The router entry points of a kernel language other than AscendC: ``opkit.<package>.language``."""
    if lang not in LANGUAGES:
        raise OpkitError(f"op.yaml lang {lang!r}: no language package for it (build.LANGUAGES: "
                         f"{', '.join([ASCENDC, *LANGUAGES])})")
    return importlib.import_module(f"{__package__}.{LANGUAGES[lang]}.language")
