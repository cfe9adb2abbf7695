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
          jobs: int | None = None, verbose: bool = False, log: Log | None = None, **options) -> list[OpSpec]:
    """Build the workspace's ops (all, or those named) for a target; returns the specs built."""
    from . import targets

    ws = require_workspace(workspace)
    specs = workspace_specs(ws, tuple(ops))
    if not specs:
        raise OpkitError(f"workspace {ws} has no ops (ops/<op>/op.yaml); run `opkit new <OpName>`")
    backend = targets.get(target)
    name = backend.NAME
    # each target's build() says itself when this machine cannot build for it (options may not need all)
    backend.build(specs, _build_dir(ws, name), jobs=jobs, log=log or (lambda s: None), verbose=verbose, **options)
    return specs


# -- build state ---------------------------------------------------------------------------------

def source_files(spec: OpSpec) -> list[Path]:
    """Everything in the op folder a build reads (op.yaml, kernel.cpp, tiling.h and any header)."""
    return sorted(p for p in spec.dir.iterdir()
                  if p.is_file() and (p.suffix in (".yaml", ".cpp", ".h", ".hpp", ".cc", ".inc") or p == spec.kernel_file))


def stamp_data(spec: OpSpec, target: str, dtypes: list[str] | None = None) -> dict:
    """The build stamp's fields (cmake/opkit_emulator.cmake copies them from opkit.opinfo after a build)."""
    return {"op": spec.name, "dir": str(spec.dir), "target": target, "opkit": __version__,
            "torch": _torch_version(), "sources": [str(p) for p in source_files(spec)],
            "dtypes": [d for d in spec.dtypes if dtypes is None or d in dtypes]}


def write_stamp(spec: OpSpec, op_out_dir: Path, target: str, dtypes: list[str] | None = None) -> None:
    """dtypes: the lead dtypes built (a `--dtype` build); None: all of the op's."""
    op_out_dir.mkdir(parents=True, exist_ok=True)
    data = stamp_data(spec, target, dtypes) | {"time": time.time()}
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


# -- progress on screen ---------------------------------------------------------------------------

class BuildProgress:
    """A build's log on a rich console: ``[done/total] what`` lines (the builders' Ninja progress) move a
    progress bar, other lines show as its description; ``verbose`` prints every line instead. Nothing is
    drawn when the console is not a terminal (logs and pipes get the command's result lines only)."""

    def __init__(self, console, verbose: bool = False):
        self.console, self.verbose = console, verbose

    def __enter__(self) -> Log:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=self.console, transient=True,
                                 disable=self.verbose or not self.console.is_terminal)
        self.progress.__enter__()
        self.task = self.progress.add_task("building ...", total=None)
        return self.log

    def log(self, msg: str) -> None:
        if self.verbose:
            self.console.print(msg, markup=False, soft_wrap=True)
            return
        m = _PROGRESS.match(msg)
        if m:
            self.progress.update(self.task, completed=int(m[1]), total=int(m[2]), description=_ellipsis(m[3]))
        else:
            self.progress.update(self.task, description=_ellipsis(msg))

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)


def _ellipsis(text: str, width: int = 60) -> str:
    from rich.markup import escape
    return escape(text if len(text) <= width else "..." + text[-(width - 3):])
