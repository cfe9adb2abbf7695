"""Where things are: opkit's shared resources, the user's workspace, and the ops in both.

Resources: an installed opkit carries ops/ and templates/ as ``opkit/_share/...`` (setup.py);
an editable install or a source checkout uses the repository root. ``share_dir()`` finds either.

Workspace: the nearest folder, from the current directory upward, that holds ``ops/`` or the marker
file ``opkit.yaml`` (``opkit new`` writes it in a fresh folder). Bundled ops are always available; a
workspace op shadows a bundled op of the same snake name. When the workspace *is* opkit's repository,
its ops are the bundled ops (deduplicated by path) and count as workspace ops, built in ``build/``.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import OpkitError, SpecError
from .opspec import OpSpec, load_spec

MARKER = "opkit.yaml"
PACKAGE_DIR = Path(__file__).resolve().parent


# -- resources -----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def share_dir() -> Path:
    """The folder holding opkit's ops/ and templates/ (installed or source layout). Each target's own
    templates and CMake live in its package (opkit/targets/<name>/)."""
    installed = PACKAGE_DIR / "_share"
    if (installed / "templates").is_dir():
        return installed
    repo = PACKAGE_DIR.parent.parent          # <repo>/python/opkit -> <repo>
    if (repo / "ops").is_dir() and (repo / "templates").is_dir() and (repo / "cmake").is_dir():
        return repo
    raise OpkitError(f"opkit's shared files (ops/, templates/) are missing: looked in {installed} "
                     f"and {repo}; reinstall opkit")


def bundled_ops_dir() -> Path:
    return share_dir() / "ops"


def templates_dir() -> Path:
    return share_dir() / "templates"


def cmake_dir() -> Path:
    """opkit's CMake modules (the repository's cmake/, shipped as opkit/_share/cmake)."""
    return share_dir() / "cmake"


def host_include_dir() -> Path:
    """python/opkit/include: opkit/platform.h, opkit/tiling.h, opkit/launch_abi.h."""
    return PACKAGE_DIR / "include"


def emulator_include_dir() -> Path:
    return PACKAGE_DIR / "emulator" / "include"


# -- workspace -----------------------------------------------------------------------------------

def find_workspace(start: str | Path | None = None) -> Path | None:
    """Nearest folder from ``start`` (default: cwd) upward holding ops/ or opkit.yaml; None if none."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file() or (folder / "ops").is_dir():
            return folder
    return None


def require_workspace(start: str | Path | None = None) -> Path:
    ws = find_workspace(start)
    if ws is None:
        here = Path(start if start is not None else os.getcwd()).resolve()
        raise OpkitError(f"no opkit workspace here: neither {here} nor a folder above it holds ops/ or "
                         f"{MARKER}; run `opkit new <OpName>` to start one")
    return ws


def build_dir(workspace: Path, target: str) -> Path:
    return Path(workspace) / "build" / "opkit" / target


def is_bundled_workspace(workspace: Path) -> bool:
    """True when the workspace's ops/ is opkit's own bundled ops/ (working inside opkit's repo)."""
    try:
        return (Path(workspace) / "ops").resolve() == bundled_ops_dir().resolve()
    except OpkitError:
        return False


@dataclass(frozen=True)
class OpEntry:
    """One op folder: its spec, or the error that its op.yaml raised."""
    dir: Path
    spec: OpSpec | None
    error: SpecError | None
    bundled: bool

    @property
    def snake(self) -> str:
        return self.spec.snake if self.spec else self.dir.name


def scan_ops(ops_dir: Path, bundled: bool = False) -> list[OpEntry]:
    """Every ops/<folder>/op.yaml, sorted by folder; invalid specs are kept with their error."""
    entries: list[OpEntry] = []
    if not Path(ops_dir).is_dir():
        return entries
    for d in sorted(p for p in Path(ops_dir).iterdir() if (p / "op.yaml").is_file()):
        try:
            entries.append(OpEntry(d.resolve(), load_spec(d, bundled=bundled), None, bundled))
        except SpecError as e:
            entries.append(OpEntry(d.resolve(), None, e, bundled))
    seen: dict[str, Path] = {}
    for e in entries:
        if e.spec is None:
            continue
        if e.spec.snake in seen:
            raise SpecError(f"{e.dir / 'op.yaml'}:1: op: {e.spec.name} is also defined in "
                            f"{seen[e.spec.snake] / 'op.yaml'}; expected one folder per op")
        seen[e.spec.snake] = e.dir
    return entries


def bundled_entries() -> list[OpEntry]:
    return scan_ops(bundled_ops_dir(), bundled=True)


def workspace_entries(workspace: Path) -> list[OpEntry]:
    return scan_ops(Path(workspace) / "ops", bundled=is_bundled_workspace(workspace))


def workspace_specs(workspace: Path, names: list[str] | tuple[str, ...] = ()) -> list[OpSpec]:
    """The workspace's ops (all, or those named: snake or CamelCase). Invalid requested specs raise."""
    entries = workspace_entries(workspace)
    if not names:
        bad = [e for e in entries if e.error]
        if bad:
            raise SpecError("\n".join(str(e.error) for e in bad))
        return [e.spec for e in entries if e.spec]
    out = []
    for n in names:
        e = _find(entries, n)
        if e is None:
            bundled = _find(bundled_entries(), n)
            hint = (f"; it is a bundled op (opkit.load() builds it); run `opkit new {bundled.spec.name}` to "
                    "copy it into this workspace" if bundled and bundled.spec else "")
            have = ", ".join(x.snake for x in entries) or "none"
            raise OpkitError(f"no op {n!r} in workspace {workspace} (ops: {have}){hint}")
        if e.error:
            raise e.error
        out.append(e.spec)
    return out


def _find(entries: list[OpEntry], name: str) -> OpEntry | None:
    for e in entries:
        if name in (e.snake, e.dir.name) or (e.spec and e.spec.name == name):
            return e
    return None


def all_ops(workspace: Path | None) -> tuple[list[OpEntry], list[OpEntry], set[str]]:
    """(workspace entries, bundled entries not duplicated by path, snake names the workspace shadows)."""
    ws = workspace_entries(workspace) if workspace else []
    ws_dirs = {e.dir for e in ws}
    bundled = [e for e in bundled_entries() if e.dir not in ws_dirs]
    ws_names = {e.snake for e in ws}
    shadowed = {e.snake for e in bundled if e.snake in ws_names}
    return ws, bundled, shadowed
