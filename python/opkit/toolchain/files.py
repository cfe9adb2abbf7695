"""Writing generated files, reports and JSON: always through a temporary file renamed over the target, so a
reader (or a crash) never sees half a file. Every JSON file opkit writes goes through ``write_json``."""
from __future__ import annotations

import json
import os
import tempfile
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
    """A report, page or state file: its folder made if need be, written atomically; the path written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path, data, *, sort_keys: bool = False, default=None, indent: int | None = 1) -> Path:
    """``data`` as JSON (one trailing newline) through ``write_report``: the one JSON writer."""
    return write_report(path, json.dumps(data, indent=indent, sort_keys=sort_keys, default=default) + "\n")
