"""`opkit new NAME`: scaffold an op folder in the workspace.

Sources: the bundled op of the same name (copied, names unchanged; the workspace op then shadows it);
``--from BUNDLED_OP`` (that op's family and answers, rendered under NAME); ``--answers FILE`` (a recorded
``.opkit-scaffold.yaml``, replayed); else the family's templates with ``--set k=v`` answers
(families.py). The answers are recorded copier-style in ``ops/<op>/.opkit-scaffold.yaml``, so a scaffold
can be replayed or regenerated. An existing op folder is never touched without --force; with --force,
changed scaffold files are kept as ``<file>.orig`` before being rewritten and no other file is touched.
"""
from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import OpkitError, SpecError
from .families import families, render, resolve_data
from .opspec import parse_spec
from .opspec.names import check_op_name
from .toolchain.version import __version__
from .workspace import MARKER, bundled_entries, find_workspace, workspace_entries

DEFAULT_FAMILY = "norm"
ANSWERS = ".opkit-scaffold.yaml"
SKIP = {ANSWERS, "__pycache__"}
__all__ = ["ANSWERS", "Scaffold", "families", "new", "read_answers"]


@dataclass
class Scaffold:
    op_dir: Path
    workspace: Path
    source: str                      # bundled:<snake> | from:<snake> | answers:<file> | family:<family>
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)      # *.orig copies made by --force
    new_workspace: bool = False


def read_answers(path: Path) -> dict:
    """A recorded ``.opkit-scaffold.yaml`` (or a folder holding one): {family, data, ...}."""
    path = Path(path)
    if path.is_dir():
        path = path / ANSWERS
    try:
        got = yaml.safe_load(path.read_text())
    except OSError as e:
        raise OpkitError(f"{path}: cannot read scaffold answers: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise OpkitError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(got, dict) or not isinstance(got.get("family"), str):
        raise OpkitError(f"{path}: expected a mapping with `family:` (and `data:`), as `opkit new` writes")
    if not isinstance(got.get("data") or {}, dict):
        raise OpkitError(f"{path}: data: expected a mapping of answers, e.g. {{norm: rms}}")
    return got


def new(name: str, family: str | None = None, force: bool = False, cwd: str | Path | None = None,
        data: dict | None = None, answers: str | Path | None = None, from_op: str | None = None,
        lang: str = "ascendc") -> Scaffold:
    snake = check_op_name(name)
    here = Path(cwd or Path.cwd()).resolve()
    ws = find_workspace(here)
    fresh = ws is None
    ws = ws or here
    dest = ws / "ops" / snake

    for e in workspace_entries(ws) if not fresh else []:
        if e.snake == snake and e.dir != dest.resolve():
            raise OpkitError(f"op {name} already exists in this workspace at {e.dir}; pick another name")
    if dest.exists() and not force:
        raise OpkitError(f"{dest} already exists; nothing changed. Use `opkit new {name} --force` to rewrite "
                         "its scaffold files (your versions are kept as *.orig)")
    files, source, family, data = _sources(name, snake, dest, family, data, answers, from_op, lang)
    if "op.yaml" not in files:
        raise OpkitError(f"scaffold source {source} has no op.yaml")
    try:    # a scaffold must be a valid op before anything is written
        spec = parse_spec(files["op.yaml"].decode(), dest / "op.yaml")
    except SpecError as e:
        raise OpkitError(f"the {source} scaffold renders an invalid op.yaml (a bug in opkit's templates):\n{e}")
    if spec.name != name:
        raise OpkitError(f"the {source} scaffold names its op {spec.name}, not {name}")

    result = Scaffold(op_dir=dest, workspace=ws, source=source, new_workspace=fresh)
    dest.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = dest / rel
        if target.exists():
            if target.read_bytes() == content:
                continue
            orig = target.with_name(target.name + ".orig")
            shutil.copy2(target, orig)
            result.kept.append(orig)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        result.written.append(target)
    record = {"opkit_version": __version__, "name": name, "snake": snake, "family": family, "data": data,
              "source": source, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "files": sorted(files)}
    (dest / ANSWERS).write_text("# opkit new: the inputs this op was scaffolded from (replay: opkit new NAME "
                                "--answers this-file)\n" + yaml.safe_dump(record, sort_keys=False))
    if fresh:
        (ws / MARKER).write_text(f"# opkit workspace: ops live in ops/, builds in build/opkit/\nopkit_version: {__version__}\n")
    return result


def _sources(name, snake, dest, family, data, answers, from_op, lang="ascendc"):
    """(files, source, family, data) for the scaffold, by precedence: --from, --answers, bundled NAME, family."""
    if sum(x is not None for x in (from_op, answers)) > 1:
        raise OpkitError("opkit new: --from and --answers both name a source; give one")
    if from_op is not None:
        src = _bundled(from_op)
        if src is None:
            known = ", ".join(sorted(e.snake for e in bundled_entries() if e.spec))
            raise OpkitError(f"--from {from_op}: no bundled op of that name; bundled ops: {known}")
        rec = read_answers(src.dir)
        family, data = rec["family"], resolve_data(rec["family"], {**(rec.get("data") or {}), **(data or {})})
        return render(family, name, snake, data), f"from:{src.snake}", family, data
    if answers is not None:
        rec = read_answers(Path(answers))
        family = family or rec["family"]
        data = resolve_data(family, {**(rec.get("data") or {}), **(data or {})})
        return render(family, name, snake, data), f"answers:{answers}", family, data
    bundled = _bundled(snake) if lang == "ascendc" else None
    if bundled is not None and not data and family is None:
        if bundled.dir == dest.resolve():
            raise OpkitError(f"{dest} is opkit's bundled {name} itself; scaffold it in your own workspace")
        files = {p.name: p.read_bytes() for p in sorted(bundled.dir.iterdir())
                 if p.is_file() and p.name not in SKIP and p.suffix not in (".orig", ".pyc")}
        rec = read_answers(bundled.dir) if (bundled.dir / ANSWERS).is_file() else {}
        return files, f"bundled:{snake}", bundled.spec.family, rec.get("data") or {}
    family = family or DEFAULT_FAMILY
    data = resolve_data(family, data, lang)
    source = f"family:{family}" + ("" if lang == "ascendc" else f" ({lang})")
    return render(family, name, snake, data, lang), source, family, data


def _bundled(op: str):
    snake = op if op.islower() else check_op_name(op)
    return next((e for e in bundled_entries() if e.snake == snake and e.spec), None)


def rerender(op_dir: Path) -> dict[str, bytes]:
    """What the op folder's recorded answers render to now (bundled ops: exactly their files)."""
    rec = read_answers(op_dir)
    name = rec.get("name") or parse_spec((Path(op_dir) / "op.yaml").read_text(), Path(op_dir) / "op.yaml").name
    return render(rec["family"], name, check_op_name(name), rec.get("data") or {})
