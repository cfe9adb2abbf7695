"""The per-user cache: bundled ops are built once per user into ``<cache root>/<version>-<key>/``."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from ..workspace import share_dir
from . import isa
from .stamps import torch_version
from .version import __version__


def cache_root() -> Path:
    """$OPKIT_CACHE_DIR, else ``$XDG_CACHE_HOME/opkit`` (default ``~/.cache/opkit``)."""
    env = os.environ.get("OPKIT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "opkit"


def bundled_cache_dir() -> Path:
    """``<cache root>/<version>-<key>``, key = hash of the torch version, the Python version and where
    this opkit's files live. Source edits do not change the folder: Ninja rebuilds just what changed,
    and the loader's ``sources_digest()`` decides cheaply whether Ninja needs to run at all."""
    # the installed version, not `import torch` (~3 s that every `opkit build` needing a bundled op paid);
    # read the same way whether or not torch is imported, so the CLI and a session find one folder
    # and the ISA level (toolchain/isa.py): hosts of two levels sharing a home folder never share modules
    key = (f"opkit {__version__} torch {torch_version()} py {sys.version_info[:2]} share {share_dir()} "
           f"isa {isa.level()}")
    return cache_root() / f"{__version__}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
