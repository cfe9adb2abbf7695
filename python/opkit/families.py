"""Template families: ``templates/families/<family>/`` renders an op folder from a name and a few answers.

``family.yaml`` declares the family's ``data`` (each key with a default, its choices and what it selects)
and the ``variants``, the combinations of answers its templates are written for: the bundled ops are
renders of them (``ops/<op>/.opkit-scaffold.yaml`` holds each one's answers, and a test re-renders every
bundled op byte for byte), so an edit to a bundled op goes into its family's templates. With the answer
``backward: true`` the family's ``backward/`` templates render (a backward kernel shares little with its
forward one). Templates see
``name``, ``snake``, ``family``, ``tiling_struct``, ``tiling_func``, ``opkit_version`` and the data keys, and
import the parts families share from ``templates/families/_macros/`` (kernel preamble and entry, row
tiling, I/O stages); C++ that depends on the answers, such as the kernel entry's parameter list, comes from
Python (``kernel_entry``, ``gm_params``: opkit/lowering.py), not from string concatenation in a template. Every rendered
file starts with a header naming its template and the answers that made it.
"""
from __future__ import annotations

from pathlib import Path

import jinja2
import yaml

from .errors import OpkitError
from .lowering import gm_params, kernel_entry
from .toolchain.version import __version__
from .workspace import templates_dir


LANGS = ("ascendc", "tbe")


def family_dir(family: str, lang: str = "ascendc") -> Path:
    """templates/families/<family> (AscendC), templates/tbe/<family> (TBE DSL, docs/tbe.md)."""
    return templates_dir() / ("tbe" if lang == "tbe" else "families") / family


def families(lang: str = "ascendc") -> dict[str, str]:
    """Family name -> one-line summary."""
    root = family_dir("", lang)
    out = {}
    if root.is_dir():
        for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_") and any(p.glob("*.j2"))):
            out[d.name] = str(meta(d.name, lang).get("summary", ""))
    return out


def meta(family: str, lang: str = "ascendc") -> dict:
    f = family_dir(family, lang) / "family.yaml"
    return (yaml.safe_load(f.read_text()) or {}) if f.is_file() else {}


def parse_data(pairs: tuple[str, ...] | list[str]) -> dict:
    """``k=v`` strings (``--set``) -> dict; values read as YAML scalars (``true`` is a bool)."""
    out = {}
    for p in pairs:
        k, eq, v = p.partition("=")
        if not eq or not k.strip():
            raise OpkitError(f"--set {p!r}: expected KEY=VALUE, e.g. --set norm=rms")
        out[k.strip()] = yaml.safe_load(v) if v.strip() else ""
    return out


def resolve_data(family: str, data: dict | None, lang: str = "ascendc") -> dict:
    """The family's defaults updated by ``data``; unknown keys, values and combinations are errors."""
    if lang not in LANGS:
        raise OpkitError(f"unknown --lang {lang!r}; expected {' or '.join(LANGS)}")
    known = families(lang)
    if family not in known:
        raise OpkitError(f"unknown family {family!r}{' for --lang ' + lang if lang != 'ascendc' else ''}; "
                         f"expected one of: {', '.join(known) or '(none installed)'}")
    schema = meta(family, lang).get("data") or {}
    data = dict(data or {})
    bad = sorted(set(data) - set(schema))
    if bad:
        raise OpkitError(f"family {family}: unknown data key(s) {', '.join(bad)}; expected some of: "
                         f"{', '.join(schema) or '(this family takes none)'}")
    full = {k: data.get(k, s.get("default")) for k, s in schema.items()}
    for k, v in full.items():
        choices = schema[k].get("choices")
        if choices and v not in choices:
            raise OpkitError(f"family {family}: data {k}={v!r} is not one of {choices} ({schema[k].get('doc', '')})")
    variants = [{**{k: s.get("default") for k, s in schema.items()}, **v} for v in meta(family, lang).get("variants") or []]
    if variants and full not in variants:
        def show(d):
            return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in d.items())
        raise OpkitError(f"family {family}: the templates are written for these answers only: "
                         f"{'; '.join(show(v) for v in variants)}; got {show(full)}")
    return full


def context(name: str, snake: str, family: str, data: dict) -> dict:
    return {**data, "name": name, "op": name, "snake": snake, "family": family,
            "tiling_struct": f"{name}TilingData", "tiling_func": f"{name}Tiling", "opkit_version": __version__}


def render(family: str, name: str, snake: str, data: dict | None = None, lang: str = "ascendc") -> dict[str, bytes]:
    """file name -> content of the op folder the family renders for these answers."""
    full = resolve_data(family, data, lang)
    root = family_dir(family, lang)
    if full.get("backward"):
        root = root / "backward"         # a backward kernel shares little with its forward one
    # Block tags sit on their own lines in the templates: trim them with their newline and indent. The
    # family's folder first, then the families' root (for `{% import "_macros/..." %}`).
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(root), str(family_dir("", lang))]),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
                             lstrip_blocks=True)
    env.globals.update(kernel_entry=kernel_entry, gm_params=gm_params)   # C++ spelled in Python
    ctx = context(name, snake, family, full)
    out: dict[str, bytes] = {}
    for p in sorted(root.iterdir()):
        if p.is_file() and p.name.endswith(".j2"):
            text = env.get_template(p.name).render(ctx)
            out[p.name[:-3]] = (header(p, name, full) + text).encode()
    return out


_COMMENT = {".cpp": "//", ".h": "//", ".py": "#", ".yaml": "#"}


def header(template: Path, name: str, answers: dict) -> str:
    """The first lines of a rendered file: its template and the answers that made it (structured or long
    answers, such as the aten family's inputs, by key only: .opkit-scaffold.yaml holds them)."""
    mark = _COMMENT[Path(template.name[:-3]).suffix]

    def short(v) -> bool:
        return not isinstance(v, (list, dict)) and len(str(v)) <= 40 and "\n" not in str(v)
    shown = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in answers.items() if short(v)]
    shown += [k for k, v in answers.items() if not short(v)]
    where = template.relative_to(templates_dir().parent).as_posix()
    return (f"{mark} Rendered by opkit from {where} for {name}" + (f" ({', '.join(shown)})" if shown else "") +
            f".\n{mark} Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).\n")
