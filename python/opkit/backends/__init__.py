"""Build targets, one module each (docs/architecture.md "Backends"): ``cpu`` (the AscendC CPU
emulator, default) and ``npu`` (CANN + torch_npu). Each module exposes ``available()``, ``build()``
and ``library()``."""
from __future__ import annotations

import importlib
import os
from types import ModuleType

from ..errors import OpkitError

TARGETS = ("cpu", "npu")


def default_target() -> str:
    """``cpu`` unless the environment variable OPKIT_TARGET says otherwise."""
    return os.environ.get("OPKIT_TARGET") or "cpu"


def get(target: str | None = None) -> ModuleType:
    target = target or default_target()
    if target not in TARGETS:
        raise OpkitError(f"unknown target {target!r}; expected one of: {', '.join(TARGETS)}")
    try:
        return importlib.import_module(f"{__name__}.{target}")
    except ModuleNotFoundError as e:
        if e.name == f"{__name__}.{target}":
            raise OpkitError(f"target {target!r} is not part of this opkit installation "
                             f"(no module {e.name})") from None
        raise
