"""`opkit build`: the target-agnostic driver, plus helpers the targets share (CMake/Ninja tools,
write-if-changed rendering, compile-error reports that show the user's own lines first)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterable

from . import __version__
from .errors import BuildError, OpkitError
from .spec import OpSpec
from .workspace import build_dir as _build_dir
from .workspace import require_workspace, workspace_specs

Log = Callable[[str], None]
STAMP = "build.json"


def build(ops: Iterable[str] = (), *, workspace: str | Path | None = None, target: str | None = None,
          jobs: int | None = None, verbose: bool = False, log: Log | None = None, keep_going: bool = False,
          **options) -> list[OpSpec]:
    """Build the workspace's ops (all, or those named, with the ops they need: deps.py) for a target;
    returns the specs built. ``keep_going``: an op whose op.yaml is invalid or whose build fails does not
    stop the others; the BuildError raised at the end names every op that failed (``failed_ops``)."""
    from . import targets

    ws = require_workspace(workspace)
    specs, broken = _requested(ws, tuple(ops), keep_going)
    if not specs and not broken:
        raise OpkitError(f"workspace {ws} has no ops (ops/<op>/op.yaml); run `opkit new <OpName>`")
    specs, bundled = _with_needs(ws, specs)
    backend = targets.get(target)
    name = backend.NAME
    failed: dict[str, str] = dict(broken)
    if specs:
        # each target's build() says itself when this machine cannot build for it (options may not need all)
        try:
            backend.build(specs, _build_dir(ws, name), jobs=jobs, log=log or (lambda s: None), verbose=verbose,
                          **({"keep_going": True} if keep_going else {}), **options)
        except BuildError as e:
            if not keep_going:
                raise
            failed.update(getattr(e, "failed_ops", None) or {s.snake: str(e) for s in specs})
    if bundled and name == targets.HOST:     # bundled ops a workspace op needs: into the user's cache
        from .loader import ensure_bundled_built
        got = {s.snake for s, _ in ensure_bundled_built(bundled, quiet=True)}
        failed.update({s.snake: f"bundled op {s.snake} failed to build" for s in bundled if s.snake not in got})
    if failed:
        err = BuildError("\n\n".join(failed.values()) + "\n\nopkit build: failed: " + ", ".join(sorted(failed)))
        err.failed_ops = failed
        err.built = [s for s in specs + bundled if s.snake not in failed]
        raise err
    return specs + bundled


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


def _with_needs(ws: Path, specs: list[OpSpec]) -> tuple[list[OpSpec], list[OpSpec]]:
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


# -- build state ---------------------------------------------------------------------------------

def source_files(spec: OpSpec) -> list[Path]:
    """Everything in the op folder a build reads (op.yaml, kernel.cpp, tiling.h and any header)."""
    return sorted(p for p in spec.dir.iterdir()
                  if p.is_file() and (p.suffix in (".yaml", ".cpp", ".h", ".hpp", ".cc", ".inc") or p == spec.kernel_file))


def write_stamp(spec: OpSpec, op_out_dir: Path, target: str, dtypes: list[str] | None = None) -> None:
    """dtypes: the lead dtypes built (a `--dtype` build); None: all of the op's."""
    op_out_dir.mkdir(parents=True, exist_ok=True)
    data = {"op": spec.name, "dir": str(spec.dir), "target": target, "opkit": __version__,
            "torch": _torch_version(), "time": time.time(), "sources": [str(p) for p in source_files(spec)],
            "dtypes": [d for d in spec.dtypes if dtypes is None or d in dtypes]}
    (op_out_dir / STAMP).write_text(json.dumps(data, indent=1))


def build_state(spec: OpSpec, op_out_dir: Path, library: Path) -> str:
    """'built', 'stale' (sources or torch changed since the last build) or 'not built'."""
    stamp = op_out_dir / STAMP
    if not library.is_file() or not stamp.is_file():
        return "not built"
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return "stale"
    t = stamp.stat().st_mtime
    if data.get("torch") != _torch_version() or data.get("dir") != str(spec.dir):
        return "stale"
    if any(p.stat().st_mtime > t for p in source_files(spec)):
        return "stale"
    return "built"


def built_dtypes(spec: OpSpec, op_out_dir: Path) -> list[str]:
    """The lead dtypes the last build made kernels for (all, unless it was `opkit build --dtype`)."""
    try:
        return list(json.loads((op_out_dir / STAMP).read_text()).get("dtypes", spec.dtypes))
    except (OSError, ValueError):
        return list(spec.dtypes)


def _torch_version() -> str:
    """The installed torch's version, without importing torch (that takes seconds)."""
    from importlib import metadata
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        import torch
        return torch.__version__


# -- tools ---------------------------------------------------------------------------------------

def cmake_exe() -> str:
    """CMake from the `cmake` pip package (a dependency), else PATH."""
    try:
        import cmake
        exe = Path(cmake.CMAKE_BIN_DIR) / "cmake"
        if exe.is_file():
            return str(exe)
    except (ImportError, AttributeError):
        pass
    found = shutil.which("cmake")
    if not found:
        raise BuildError("CMake not found: install the `cmake` pip package (pip install cmake)")
    return found


def ninja_exe() -> str:
    try:
        import ninja
        exe = Path(ninja.BIN_DIR) / "ninja"
        if exe.is_file():
            return str(exe)
    except (ImportError, AttributeError):
        pass
    found = shutil.which("ninja")
    if not found:
        raise BuildError("Ninja not found: install the `ninja` pip package (pip install ninja)")
    return found


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def write_if_changed(path: Path, text: str) -> bool:
    """Write only on change, so Ninja rebuilds nothing for an unchanged op."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text() == text:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")


def run_tool(cmd: list[str], *, cwd: Path | None = None, verbose: bool = False, log: Log | None = None,
             progress: Callable[[int, int, str], None] | None = None) -> tuple[int, str]:
    """Run a build tool, returning (exit code, combined output). Verbose: echo every line to ``log``."""
    env = dict(os.environ, LC_ALL="C", LANG="C")   # compiler messages in English, for the filter below
    env.pop("MAKEFLAGS", None)
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", env=env)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if verbose and log:
            log(line.rstrip("\n"))
        elif progress:
            m = _PROGRESS.match(line)
            if m:
                progress(int(m[1]), int(m[2]), m[3])
    return proc.wait(), "".join(lines)


# -- compile errors: the user's lines first --------------------------------------------------------

_DIAG_START = re.compile(r"^(In file included from |FAILED: |ninja: |\[\d+/\d+\] |/|[A-Za-z]:|\S+\.(cpp|h|hpp|cc):\d+)")


def compile_failure_message(output: str, user_files: Iterable[Path], what: str) -> str:
    """Reorder a failed build's output: the compiler's diagnostics about the user's files first
    (deduplicated: one kernel compiles once per dtype and variant), then the tool's full output."""
    users = sorted({str(Path(p)) for p in user_files}, key=len, reverse=True)
    lines = output.splitlines()
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if any(line.startswith(u + ":") for u in users) and re.match(r"^.+?:\d+:(\d+:)? ", line):
            block = [line]
            j = i + 1
            # context lines that belong to this diagnostic: source excerpt, caret, notes without a path
            while j < len(lines) and not _DIAG_START.match(lines[j]) and not lines[j].startswith(("FAILED", "ninja")):
                block.append(lines[j])
                j += 1
            text = "\n".join(block)
            if text not in blocks:
                blocks.append(text)
            i = j
        else:
            i += 1
    head = f"{what} failed"
    tail = _trim(output)
    if blocks:
        return f"{head}; errors in your files:\n" + "\n".join(blocks) + \
            "\n\n--- full build output ---\n" + tail
    return f"{head}:\n{tail}"


def _trim(output: str, keep: int = 200) -> str:
    lines = output.rstrip().splitlines()
    if len(lines) <= keep:
        return "\n".join(lines)
    return "\n".join(lines[:keep // 2] + [f"... ({len(lines) - keep} lines cut) ..."] + lines[-keep // 2:])
