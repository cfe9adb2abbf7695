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
from .errors import BuildError, OpkitError
from .opspec import OpSpec
from .toolchain import stamps
from .toolchain.tools import Log
from .workspace import build_dir as _build_dir
from .workspace import require_workspace, workspace_specs


def build(ops: Iterable[str] = (), *, workspace: str | Path | None = None, target: str | None = None,
          jobs: int | None = None, verbose: bool = False, log: Log | None = None, keep_going: bool = False,
          **options) -> list[OpSpec]:
    """Build the workspace's ops (all, or those named, with the workspace ops they need: deps.py) for a
    target; returns the specs built. Needed bundled ops are the bundled-op cache's (opkit.load() builds them;
    `opkit build` does it at once, with_needs()). ``keep_going``: an op whose op.yaml is invalid or whose
    build fails does not stop the others; the BuildError raised at the end names every op that failed
    (``failed_ops``)."""
    ws = require_workspace(workspace)
    specs, broken = _requested(ws, tuple(ops), keep_going)
    if not specs and not broken:
        raise OpkitError(f"workspace {ws} has no ops (ops/<op>/op.yaml); run `opkit new <OpName>`")
    specs, bundled = with_needs(ws, specs)
    name = targets.get(target).NAME
    failed: dict[str, str] = dict(broken)
    if specs:
        # each builder says itself when this machine cannot build for the target (options may not need all)
        try:
            build_specs(specs, _build_dir(ws, name), target=name, jobs=jobs, verbose=verbose, log=log,
                        keep_going=keep_going, **options)
        except BuildError as e:
            if not keep_going:
                raise
            failed.update(getattr(e, "failed_ops", None) or {s.snake: str(e) for s in specs})
    if failed:
        err = BuildError("\n\n".join(failed.values()) + "\n\nopkit build: failed: " + ", ".join(sorted(failed)))
        err.failed_ops = failed
        err.built = [s for s in specs if s.snake not in failed]
        raise err
    return specs


def _requested(ws: Path, ops: tuple[str, ...], keep_going: bool) -> tuple[list[OpSpec], dict[str, str]]:
    """The specs asked for; with keep_going, ops whose op.yaml is invalid come back as (folder -> error)
    instead of stopping the build."""
    if not keep_going:
        return workspace_specs(ws, ops), {}
    from .workspace import workspace_entries
    entries = workspace_entries(ws)
    bad = {e.dir.name: str(e.error) for e in entries if e.error}
    if not ops:
        return [e.spec for e in entries if e.spec], bad
    good = tuple(o for o in ops if o not in bad)
    return (workspace_specs(ws, good) if good else []), {o: bad[o] for o in ops if o in bad}


def with_needs(ws: Path, specs: list[OpSpec]) -> tuple[list[OpSpec], list[OpSpec]]:
    """``specs`` plus the workspace ops they need, and the bundled ops they need that the workspace lacks
    (built into the user's bundled-op cache, where opkit.load() finds them)."""
    from . import deps
    from .workspace import bundled_entries, workspace_entries

    ws_specs = {e.spec.snake: e.spec for e in workspace_entries(ws) if e.spec}
    bundled = {e.spec.snake: e.spec for e in bundled_entries() if e.spec}
    found, _unknown = deps.closure(specs, lambda n: ws_specs.get(n) or bundled.get(n))
    mine = {s.snake for s in specs}
    extra_ws = [ws_specs[n.op] for n in found if n.op in ws_specs and n.op not in mine]
    extra_bundled = [bundled[n.op] for n in found if n.op not in ws_specs]
    return specs + extra_ws, extra_bundled


def build_specs(specs: list[OpSpec], build_dir: Path, *, target: str | None = None, jobs: int | None = None,
                verbose: bool = False, log: Log | None = None, keep_going: bool = False, **options) -> None:
    """Build ``specs`` into ``build_dir`` for ``target``: the ops of other languages first, each by its
    language package (TBE needs no compiler), then the AscendC ops by the target. Raises BuildError
    (with ``keep_going``, after building every AscendC op that compiles; ``failed_ops`` names the others)."""
    backend = targets.get(target)
    log = log or (lambda s: None)
    by_lang: dict[str, list[OpSpec]] = {}
    for s in specs:
        by_lang.setdefault(s.lang, []).append(s)
    for lang, group in by_lang.items():
        if lang != ASCENDC:
            language(lang).build(backend, group, Path(build_dir), jobs=jobs, log=log, **options)
    if by_lang.get(ASCENDC):
        backend.build(by_lang[ASCENDC], build_dir, jobs=jobs, log=log, verbose=verbose,
                      **({"keep_going": True} if keep_going else {}), **options)


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


def build_module(target: str, spec: OpSpec, build_dir: Path, file: str) -> Path:
    """Make one module of an AscendC op that its target builds on first use current (the cpu target: the naive
    module of the compute dtype, lowering.Variant.naive_on_demand); BuildError when it cannot."""
    backend = targets.get(target)
    if spec.lang != ASCENDC or not hasattr(backend, "build_module"):
        raise BuildError(f"opkit.{spec.snake}: {file} is missing from {Path(build_dir) / spec.snake} and target "
                         f"{backend.NAME} does not build modules on demand: run `opkit build`")
    return backend.build_module(Path(build_dir), spec, file)


ASCENDC = "ascendc"     # the targets' own language: every target builds it
# Every other kernel language (op.yaml `lang:`) -> its package, whose language.py the router calls.
LANGUAGES = {"tbe": "tbe", "cann": "cannproject"}


def language(lang: str) -> ModuleType:
    """The router entry points of a kernel language other than AscendC: ``opkit.<package>.language``."""
    if lang not in LANGUAGES:
        raise OpkitError(f"op.yaml lang {lang!r}: no language package for it (build.LANGUAGES: "
                         f"{', '.join([ASCENDC, *LANGUAGES])})")
    return importlib.import_module(f"{__package__}.{LANGUAGES[lang]}.language")
