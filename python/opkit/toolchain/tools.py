"""Build tools: CMake and Ninja (the pip packages, else PATH), running a tool with progress, job counts,
and compile errors reordered so the user's own lines come first."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Iterable

from ..errors import BuildError

Log = Callable[[str], None]


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


def first_use_progress(quiet: bool):
    """A progress bar on stderr for a build on first use (opkit.load(), the torch-side library); nothing
    when quiet. Use as ``with first_use_progress(quiet) as log: build(..., log=log)``."""
    import contextlib
    if quiet:
        return contextlib.nullcontext(lambda s: None)
    from rich.console import Console
    return BuildProgress(Console(stderr=True, highlight=False, soft_wrap=True))
