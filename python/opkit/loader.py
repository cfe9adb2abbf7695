"""`opkit.load()`: register opkit ops with PyTorch as ``torch.ops.opkit.<op>``.

Bundled ops are built on first use into a per-user cache (``~/.cache/opkit/<version>-<key>/``, or
$OPKIT_CACHE_DIR), keyed by the bundled sources, the emulator headers and the torch version, under a
file lock so concurrent processes build once. Workspace ops come from ``<workspace>/build/opkit/cpu``
(``opkit build``) and shadow bundled ops of the same name. Loading is idempotent.
"""
from __future__ import annotations

import fcntl
import hashlib
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Iterable

from . import build as router
from .errors import BuildError, OpkitError, SpecError
from .opspec import OpSpec
from .targets import HOST as TARGET   # the host target's libraries hold the schemas: loaded here
from .toolchain.cache import bundled_cache_dir
from .toolchain.tools import first_use_progress
from .workspace import all_ops, bundled_ops_dir, emulator_include_dir, find_workspace, host_include_dir
from .workspace import build_dir as ws_build_dir

_lock = threading.Lock()
_loaded: dict[str, Path] = {}        # snake -> library registered in this process
_specs: dict[str, OpSpec] = {}
_said: set[str] = set()
_build_failures: dict[str, str] = {}  # bundled op -> why its build failed (this process)
_unbuilt_needs: dict[str, str] = {}   # workspace op skipped by load(unbuilt_needs_ok=True) -> why
_builder_set: list[bool] = []         # the on-demand module builder is installed (registration.set_module_builder)


class ShadowWarning(UserWarning):
    """A workspace op replaces a bundled op of the same name."""


def loaded() -> dict[str, Path]:
    """Ops registered so far: snake name -> library."""
    return dict(_loaded)


def loaded_specs() -> dict[str, OpSpec]:
    return dict(_specs)


def unbuilt_needs() -> dict[str, str]:
    """Workspace ops that load(unbuilt_needs_ok=True) skipped because they are not built: snake -> message."""
    return dict(_unbuilt_needs)


def build_failures() -> dict[str, str]:
    """Bundled ops whose build failed in this process (so they were not loaded): snake -> compiler output."""
    return dict(_build_failures)


def load(path: str | Path | None = None, *, ops: Iterable[str] | None = None, bundled: bool = True,
         quiet: bool = False, override_aten: bool = False, backward: bool = True, unbuilt_needs_ok: bool = False,
         outside_workspace: bool = False) -> dict[str, Path]:
    """Register bundled ops and the workspace's built ops; returns snake name -> library for all loaded.

    ``path``: a workspace folder (or any folder inside one); default: the workspace around the current
    directory, if any. A workspace op without a build raises OpkitError saying to run `opkit build`.
    ``ops``: register only these ops (snake or CamelCase names): workspace ops, or bundled ops the workspace
    does not have -- only those (and their backward ops) are built on first use, not the whole library;
    ``bundled=False``: skip the bundled ops; ``quiet``: no progress or staleness messages;
    ``override_aten``: ops scaffolded from an aten op become its PrivateUse1 kernel (aten_override.py);
    ``backward=False`` with ``ops``: the named bundled ops' backward ops are not built now, but on the first
    backward call (opkit.autograd loads them then) -- what opkit.patch does, so a first patch builds less.
    ``unbuilt_needs_ok``: with ``ops``, a workspace op that comes along only because a named op needs it (its
    backward op) and is not built is skipped instead of raising; ``unbuilt_needs()`` then names it (the
    harness fails only the cases that call it). ``outside_workspace``: as if called outside any workspace
    (bundled ops only, whatever the current directory; `opkit test --bundled`).
    """
    with _lock:
        if path is not None:
            ws = find_workspace(path)
            if ws is None:
                raise OpkitError(f"opkit.load({str(path)!r}): no opkit workspace there (no ops/ or opkit.yaml "
                                 "in it or above it)")
        else:
            ws = None if outside_workspace else find_workspace()
        ws_entries, bundled_entries, shadowed = all_ops(ws)
        picked_bundled: set[str] | None = None     # ops=[...]: the bundled ops named there
        as_needs: set[str] = set()                  # workspace ops loaded only because a named op needs them
        if ops is not None:
            wanted = {ops} if isinstance(ops, str) else set(ops)
            chosen = [e for e in ws_entries if _named(e, wanted)]
            missing = wanted - _names(chosen)
            # Names the workspace does not have may be bundled ops: then only those are built and loaded.
            extra = [e for e in bundled_entries if e.snake not in shadowed and _named(e, missing)] if bundled else []
            missing -= _names(extra)
            if missing:
                where = f"workspace {ws}" + (" or among the bundled ops" if bundled else "")
                raise OpkitError(f"opkit.load: no op {', '.join(sorted(missing))} in {where}")
            picked_bundled = {e.snake for e in extra}
            # The chosen ops' backward ops come along from the workspace when it has them (else from the
            # bundled ops, below), so autograd and opcheck work on a subset too.
            # (its own name: `backward` is the parameter that says whether bundled backward ops come along)
            ws_backward = {e.spec.backward.op for e in chosen if e.spec and e.spec.backward}
            ws_entries = chosen + [e for e in ws_entries if e.snake in ws_backward and e not in chosen]
            as_needs = {e.snake for e in ws_entries if e not in chosen}
        bad = [e for e in ws_entries if e.error]
        if bad:
            raise SpecError("\n".join(str(e.error) for e in bad))

        todo: list[tuple[OpSpec, Path]] = []
        out_dir = ws_build_dir(ws, TARGET) if ws else None
        for e in ws_entries:
            lib = router.library(TARGET, out_dir, e.spec)
            state = router.build_state(TARGET, e.spec, out_dir)
            if state == "not built" and unbuilt_needs_ok and e.snake in as_needs:
                _unbuilt_needs[e.snake] = (f"op {e.spec.snake} in workspace {ws} is not built for target {TARGET}: "
                                           f"run `opkit build {e.spec.snake}` in {ws} (looked for {lib})")
                continue
            if state == "not built":
                raise OpkitError(f"op {e.spec.snake} in workspace {ws} is not built for target {TARGET}: "
                                 f"run `opkit build` in {ws} (looked for {lib}){_other_level(e.spec, lib)}")
            if state == "stale" and not quiet:
                warnings.warn(f"opkit: {e.spec.snake}: sources changed since the last `opkit build`; "
                              f"loading the old build {lib}", stacklevel=2)
            todo.append((e.spec, lib))
            if e.snake in shadowed and e.snake not in _said:
                _said.add(e.snake)
                warnings.warn(f"opkit: workspace op {e.snake} ({e.dir}) shadows the bundled op of the same name",
                              ShadowWarning, stacklevel=3)

        # A workspace op's backward op (op.yaml backward.op) comes along, from the bundled ops if the
        # workspace does not have it, so autograd and opcheck work even with bundled=False.
        ws_names = {e.snake for e in ws_entries}
        needed = {e.spec.backward.op for e in ws_entries if e.spec.backward} - ws_names
        if picked_bundled is not None:     # ops=[...]: those bundled ops and their backward ops only
            if backward:
                picked_bundled |= {e.spec.backward.op for e in bundled_entries
                                   if e.snake in picked_bundled and e.spec and e.spec.backward}
            needed |= picked_bundled - ws_names
        take_all = bundled and picked_bundled is None
        if take_all or needed:
            wanted = [e.spec for e in bundled_entries if e.spec and e.snake not in shadowed
                      and e.snake not in _loaded and (take_all or e.snake in needed)]
            broken = [e for e in bundled_entries if e.error]
            for e in broken:
                warnings.warn(f"opkit: bundled op {e.dir.name} skipped: {e.error}", stacklevel=2)
            if wanted:
                got = ensure_bundled_built(wanted, quiet=quiet)
                todo += got
                lost = needed - {s.snake for s, _ in got} - ws_names - set(_loaded)
                if lost:    # an op asked for, or a backward op the loaded ops need: fail loudly
                    why = "\n".join(_build_failures.get(n, "(no build output)") for n in sorted(lost))
                    raise BuildError(f"opkit.load: bundled op(s) {', '.join(sorted(lost))} could not be built:\n{why}")

        for spec, lib in todo:
            register(spec, lib)
        _after_load(ws, [s for s, _ in todo])
        if override_aten:
            from . import aten_override
            aten_override.register_loaded(_specs.values())
        return dict(_loaded)


def _other_level(spec: OpSpec, lib: Path) -> str:
    """Why a present build counts as not built when its ISA level is not this process's (toolchain/isa.py)."""
    import json

    from .toolchain import isa
    from .toolchain.stamps import other_level
    try:
        built = other_level(spec, json.loads(Path(lib).read_text()))
    except (OSError, ValueError):
        return ""
    if built is None:
        return ""
    return (f"; it was built for ISA level {built or 'unrecorded (an older opkit)'} and this process "
            f"builds for {isa.level()} (OPKIT_ISA, docs/emulator.md \"Host ISA\")")


def _named(entry, names: set[str]) -> bool:
    return entry.snake in names or entry.dir.name in names or bool(entry.spec and entry.spec.name in names)


def _names(entries) -> set[str]:
    return {e.snake for e in entries} | {e.dir.name for e in entries} | {e.spec.name for e in entries if e.spec}


def register(spec: OpSpec, lib: Path) -> None:
    """Register one op (once per process; a second library for it is an error) through the registration
    surface (opkit.registration): an AscendC op from its build manifest ``lib``, other languages by their own
    package, which calls the surface too."""
    from . import registration

    lib = Path(lib).resolve()
    prev = _loaded.get(spec.snake)
    if prev is not None:
        if prev != lib:
            raise OpkitError(f"opkit.load: op {spec.snake} is already registered from {prev}; a process can "
                             f"register an op once, so {lib} cannot replace it (restart Python)")
        return
    if spec.lang != router.ASCENDC:     # its language registers it (tbe: from Python, the DSL emulation runs it)
        router.language(spec.lang).register(spec, lib)
    else:
        if not _builder_set:     # once per process: the torch-side library keeps it
            registration.set_module_builder(_build_on_demand)
            _builder_set.append(True)
        registration.register_emulator(spec, lib.parent)
    _loaded[spec.snake] = lib
    _specs[spec.snake] = spec


def _build_on_demand(snake: str, module_dir: str, file: str) -> None:
    """The torch-side library asks for a kernel module built on first use (the naive module of the compute
    dtype): built now, in the build folder the op was loaded from, under that folder's lock."""
    spec = _specs.get(snake)
    if spec is None:
        raise OpkitError(f"opkit.{snake}: {file} is built on first use, but this process did not load the op "
                         f"through opkit.load()")
    router.build_module(TARGET, spec, Path(module_dir).parent, file)


def _after_load(ws: Path | None, specs: list[OpSpec]) -> None:
    # Autograd: opkit/autograd.py decides per op what backward it gets; registration registers it.
    from . import autograd, registration

    def load_backward(op: str) -> None:     # a backward op opkit.patch did not load: built on first backward
        load(ops=[op])
    for s in specs:     # every op: backward op, reference fallback, or "not differentiable"
        registration.register_autograd(s, autograd.formulas(s, load_missing=load_backward))
    # Then every other target's kernels, on top of the host's schemas (each target decides cheaply
    # whether it applies on this machine: npu only where torch_npu is installed).
    from . import targets
    for name in targets.names():
        if name != targets.HOST:
            targets.get(name).load(ws, list(_specs.values()))


# -- bundled ops: built once per user into a cache -----------------------------------------------

def sources_digest() -> str:
    """Hash of everything a bundled build reads: bundled ops, emulator and host headers, the kernel-module
    sources (csrc/op), the cmake/ modules and the host target's code."""
    h = hashlib.sha256()
    from .targets import host
    from .workspace import PACKAGE_DIR, cmake_dir
    target_dir = Path(host().__file__).parent      # the host target's code
    for root in (bundled_ops_dir(), emulator_include_dir(), host_include_dir(), target_dir, cmake_dir(),
                 PACKAGE_DIR / "csrc" / "op"):
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".orig"):
                h.update(str(p.relative_to(root)).encode() + b"\0")
                h.update(p.read_bytes())
    return h.hexdigest()


def ensure_bundled_built(specs: list[OpSpec], *, quiet: bool = False) -> list[tuple[OpSpec, Path]]:
    """Build the bundled ops missing from the cache (under a file lock); return (spec, library) pairs.
    A bundled op that fails to build is skipped with a warning; the others still load."""
    from .targets import host
    cpu = host()        # its available() and its folder (sources_digest); builds go through the router

    out = bundled_cache_dir()
    out.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.lock", "w") as lockfile:
        fcntl.flock(lockfile, fcntl.LOCK_EX)      # a second process waits here, then finds the build
        digest = sources_digest()

        def fresh(s: OpSpec) -> bool:
            # built after the last change to any bundled source: no need to even ask Ninja
            f = out / s.snake / "sources.sha256"
            return (f.is_file() and f.read_text().strip() == digest
                    and router.build_state(TARGET, s, out) != "not built")
        missing = [s for s in specs if not fresh(s)]
        failed: dict[str, str] = {}
        if missing:
            names = ", ".join(s.snake for s in missing)
            if not quiet:
                hint = "" if len(missing) < 4 else " (opkit.load(ops=[...]) builds only the ops you name)"
                print(f"opkit: building {len(missing)} bundled op(s) ({names}) into {out} -- first use or "
                      f"changed sources; about 10 s of CPU per op{hint}", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            ok, why = cpu.available()
            if not ok:
                raise BuildError(f"opkit.load(): cannot build the bundled ops: {why}")
            try:
                with first_use_progress(quiet) as log:
                    router.build_specs(missing, out, target=TARGET, log=log, keep_going=True)
            except BuildError as e:
                failed = getattr(e, "failed_ops", None) or {s.snake: str(e) for s in missing}
                _build_failures.update(failed)
                for snake, msg in failed.items():
                    warnings.warn(f"opkit: bundled op {snake} failed to build and is not loaded:\n{msg}",
                                  stacklevel=3)
            for s in missing:
                if s.snake not in failed:
                    (out / s.snake / "sources.sha256").write_text(digest + "\n")
            if not quiet:
                print(f"opkit: built {len(missing) - len(failed)} bundled op(s) in {time.perf_counter() - t0:.1f} s",
                      file=sys.stderr, flush=True)
        built = [s for s in specs if s.snake not in failed and router.library(TARGET, out, s).is_file()]
        _device_builds(built, out, digest, quiet)
        return [(s, router.library(TARGET, out, s)) for s in built]


def _device_builds(specs: list[OpSpec], out: Path, digest: str, quiet: bool) -> None:
    """Every other target this machine can build for (npu: CANN and torch_npu present) builds the bundled
    ops too, into <cache>/<target>, once per change of the sources; its load() picks them up."""
    from . import targets
    for name in targets.names():
        if name == targets.HOST or not specs:
            continue
        t = targets.get(name)
        if not t.available()[0]:
            continue
        where = out / name
        key = hashlib.sha256((digest + _tree_digest(Path(t.__file__).parent) +
                              " ".join(sorted(s.snake for s in specs))).encode()).hexdigest()
        stamp = where / "sources.sha256"
        last = stamp.read_text().strip() if stamp.is_file() else ""
        if last == key:
            continue
        if last == f"failed {key}":     # failed for these very sources: say so, do not rebuild on every load
            warnings.warn(f"opkit: the bundled ops' {name} build failed earlier (log: {where / 'failed.txt'}); "
                          f"they will not run on {name}", stacklevel=3)
            continue
        if not quiet:
            print(f"opkit: building bundled ops for target {name} into {where}", file=sys.stderr, flush=True)
        where.mkdir(parents=True, exist_ok=True)
        try:
            router.build_specs(specs, where, target=name, jobs=None, log=(lambda s: None))
        except BuildError as e:
            (where / "failed.txt").write_text(f"{e}\n")
            stamp.write_text(f"failed {key}\n")
            warnings.warn(f"opkit: bundled ops not built for target {name}, they will not run there:\n{e}",
                          stacklevel=3)
            continue
        stamp.write_text(key + "\n")


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()
