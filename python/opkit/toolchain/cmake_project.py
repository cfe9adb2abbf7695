"""Configuring opkit's CMake project, cmake/workspace/CMakeLists.txt (the same cmake/ modules as the
repository's CMakeLists.txt): for a build folder's op folders (the cpu target) and for opkit's torch-side
library (opkit.registration). docs/architecture.md "Build"."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from ..errors import BuildError
from ..workspace import cmake_dir
from . import isa
from .tools import Log, cmake_exe, default_jobs, ninja_exe, run_tool


def configure(tree: Path, out_dir: Path, op_dirs: list[str], *, keep_going: bool = False, verbose: bool = False,
              log: Log = lambda s: None, torch_library: bool = False, auto_sync: bool = True) -> None:
    """Configure cmake/workspace into ``tree`` (Ninja) for these op folders, outputs to ``out_dir``; again only
    when the folders or options change (an op.yaml edit re-runs the configure from Ninja by itself)."""
    args = [f"-DPython3_EXECUTABLE={sys.executable}", f"-DOPKIT_OUTPUT_DIR={out_dir}",
            f"-DOPKIT_OP_DIRS={';'.join(op_dirs)}", f"-DOPKIT_KEEP_GOING={'ON' if keep_going else 'OFF'}",
            f"-DOPKIT_TORCH_LIBRARY={'ON' if torch_library else 'OFF'}", "-DCMAKE_BUILD_TYPE=Release",
            f"-DOPKIT_EMU_AUTO_SYNC={'ON' if auto_sync else 'OFF'}"]
    if not torch_library:   # the kernel modules' ISA level: a new level configures again, Ninja rebuilds them all
        args.append(f"-DOPKIT_ISA={isa.level()}")
    source = cmake_dir() / "workspace"
    stamp = [*args, f"source={source}"]     # another opkit checkout or install may share this cache folder
    key = tree / "opkit-configure.json"
    if (tree / "build.ninja").is_file() and key.is_file() and json.loads(key.read_text()) == stamp:
        return
    _forget_other_source(tree, source)
    log(f"configuring {tree}")
    rc, out = run_tool([cmake_exe(), "-S", str(source), "-B", str(tree), "-G", "Ninja",
                        f"-DCMAKE_MAKE_PROGRAM={ninja_exe()}", *args], verbose=verbose, log=log)
    if rc != 0:
        key.unlink(missing_ok=True)
        raise BuildError(f"CMake configure failed in {tree}:\n{out[-6000:]}")
    key.write_text(json.dumps(stamp))


def _forget_other_source(tree: Path, source: Path) -> None:
    """A build tree configured from another source folder (another opkit checkout or version sharing the cache
    key, or an older layout) makes CMake refuse with 'does not match the source': drop its cache, keep the
    objects (Ninja rebuilds what changed)."""
    cache = tree / "CMakeCache.txt"
    if not cache.is_file():
        return
    home = next((ln.split("=", 1)[1].strip() for ln in cache.read_text(errors="replace").splitlines()
                 if ln.startswith("CMAKE_HOME_DIRECTORY:")), None)
    if home is not None and Path(home).resolve() != source.resolve():
        cache.unlink()
        shutil.rmtree(tree / "CMakeFiles", ignore_errors=True)


def build_torch_library(out_dir: Path, *, jobs: int | None = None, log: Log = lambda s: None,
                        verbose: bool = False) -> None:
    """opkit's torch-side library (_opkit_torch, cmake/opkit_torch.cmake) into ``out_dir``."""
    out_dir = Path(out_dir).resolve()
    tree = out_dir / "_cmake"
    configure(tree, out_dir, [], verbose=verbose, log=log, torch_library=True)
    rc, out = run_tool([ninja_exe(), "-C", str(tree), f"-j{jobs or default_jobs()}", "opkit_torch"], verbose=verbose,
                       log=log)
    if rc != 0:
        raise BuildError(f"building opkit's torch-side library failed (in {tree}):\n{out[-6000:]}")
