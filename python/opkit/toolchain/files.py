"""Writing generated files."""
from __future__ import annotations

import os
from pathlib import Path


def write_if_changed(path: Path, text: str) -> bool:
    """Write only on change (Ninja and make rebuild nothing for an unchanged file); atomic. True if written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text() == text:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


def write_report(path, text: str) -> Path:
    """A report the user asked for (--json / --html): its folder made if need be; the path written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
