"""`opkit new NAME [--family F] [--force]`: scaffold an op folder in the workspace.

Sources, in order: the bundled op of the same name (copied, names unchanged; the workspace op then
shadows it), or the family's Jinja templates ``templates/families/<family>/*.j2``. The inputs are
recorded copier-style in ``ops/<op>/.opkit-scaffold.yaml`` so a scaffold can be regenerated later.
An existing op folder is never touched without --force; with --force, changed scaffold files are kept
as ``<file>.orig`` before being rewritten and no other file is touched.
"""
from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import yaml

from . import __version__
from .errors import OpkitError, SpecError
from .names import check_op_name
from .spec import parse_spec
from .workspace import MARKER, bundled_entries, find_workspace, templates_dir, workspace_entries

DEFAULT_FAMILY = "norm"
ANSWERS = ".opkit-scaffold.yaml"
SKIP = {ANSWERS, "__pycache__"}


@dataclass
class Scaffold:
    op_dir: Path
    workspace: Path
    source: str                      # "bundled:<snake>" or "family:<family>"
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)      # *.orig copies made by --force
    new_workspace: bool = False


def families() -> dict[str, str]:
    """Family name -> one-line summary (templates/families/<f>/family.yaml `summary:`, if any)."""
    root = templates_dir() / "families"
    out = {}
    if root.is_dir():
        for d in sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.j2"))):
            summary = ""
            meta = d / "family.yaml"
            if meta.is_file():
                summary = str((yaml.safe_load(meta.read_text()) or {}).get("summary", ""))
            out[d.name] = summary
    return out


def new(name: str, family: str | None = None, force: bool = False, cwd: str | Path | None = None,
        data: dict | None = None, lang: str = "ascendc") -> Scaffold:
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

    if lang not in ("ascendc", "tbe"):
        raise OpkitError(f"unknown --lang {lang!r}; expected ascendc or tbe")
    bundled = None if lang == "tbe" else next((e for e in bundled_entries() if e.snake == snake and e.spec), None)
    if bundled is not None:
        if bundled.dir == dest.resolve():
            raise OpkitError(f"{dest} is opkit's bundled {name} itself; scaffold it in your own workspace")
        files = {p.name: p.read_bytes() for p in sorted(bundled.dir.iterdir())
                 if p.is_file() and p.name not in SKIP and p.suffix not in (".orig", ".pyc")}
        source = f"bundled:{snake}"
        family = bundled.spec.family
    else:
        family = family or DEFAULT_FAMILY
        files = _render_family(family, name, snake, data, lang)
        source = f"family:{family}" + ("" if lang == "ascendc" else f" ({lang})")
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
    answers = {"opkit_version": __version__, "name": name, "snake": snake, "family": family, "data": data or {},
               "source": source,
               "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
               "files": sorted(files)}
    (dest / ANSWERS).write_text("# opkit new: the inputs this op was scaffolded from\n" +
                                yaml.safe_dump(answers, sort_keys=False))
    if fresh:
        (ws / MARKER).write_text(f"# opkit workspace: ops live in ops/, builds in build/opkit/\nopkit_version: {__version__}\n")
    return result


def template_context(name: str, snake: str, family: str) -> dict:
    """What family templates see (documented in docs/cli.md)."""
    return {"name": name, "op": name, "snake": snake, "family": family,
            "tiling_struct": f"{name}TilingData", "tiling_func": f"{name}Tiling", "opkit_version": __version__}


# Until a family's templates exist, a bundled op of that family seeds it (names substituted).
_SEEDS = {"norm": ("LayerNormFP32", "layer_norm_fp32")}


def _from_seed(family: str, name: str, snake: str) -> dict[str, bytes]:
    seed_name, seed_snake = _SEEDS[family]
    seed = next((e for e in bundled_entries() if e.snake == seed_snake and e.spec), None)
    if seed is None:
        raise OpkitError(f"family {family!r} has no templates and its seed op {seed_snake} is not bundled")
    out = {}
    for p in sorted(seed.dir.iterdir()):
        if p.is_file() and p.name not in SKIP and p.suffix not in (".orig", ".pyc"):
            out[p.name] = p.read_text().replace(seed_name, name).replace(seed_snake, snake).encode()
    return out


def _render_family(family: str, name: str, snake: str, data: dict | None = None,
                   lang: str = "ascendc") -> dict[str, bytes]:
    root = templates_dir() / "families" / family
    known = families()
    if lang == "tbe":           # TBE op folders: templates/tbe/<family>/ (kernel.py instead of kernel.cpp)
        root = templates_dir() / "tbe" / family
        known = {d.name: "" for d in root.parent.iterdir() if d.is_dir()} if root.parent.is_dir() else {}
    if family not in known and family in _SEEDS and lang == "ascendc":
        return _from_seed(family, name, snake)
    if not root.is_dir() or family not in known:
        raise OpkitError(f"unknown family {family!r}{' for --lang ' + lang if lang != 'ascendc' else ''}; expected "
                         f"one of: {', '.join(known) or '(none installed)'}")
    # Families that declare answers (family.yaml `data:`) get their defaults, then the answers given.
    schema = (yaml.safe_load((root / "family.yaml").read_text()) or {}).get("data") if (root / "family.yaml").is_file() else None
    if schema:
        data = {**{k: v.get("default") for k, v in schema.items()}, **(data or {})}
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(root)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=bool(schema), lstrip_blocks=bool(schema))
    ctx = {**(data or {}), **template_context(name, snake, family)}
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name == "family.yaml" or "__pycache__" in p.parts:
            continue
        rel = p.relative_to(root).as_posix()
        if rel.endswith(".j2"):
            out[rel[:-3]] = env.get_template(rel).render(ctx).encode()
        else:
            out[rel] = p.read_bytes()
    return out
