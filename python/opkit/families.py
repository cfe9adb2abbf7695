"""Template families: ``templates/families/<family>/`` renders an op folder from a name and a few answers.

``family.yaml`` declares the family's ``data`` (each key with a default, its choices and what it selects)
and the ``variants``, the combinations of answers its templates are written for: the bundled ops are
renders of them (``ops/<op>/.opkit-scaffold.yaml`` holds each one's answers, and a test re-renders every
bundled op byte for byte), so an edit to a bundled op goes into its family's templates. With the answer
``backward: true`` the family's ``backward/`` templates render (a backward kernel shares little with its
forward one). Templates see
``name``, ``snake``, ``family``, ``tiling_struct``, ``tiling_func``, ``opkit_version`` and the data keys.
"""
from __future__ import annotations

from pathlib import Path

import jinja2
import yaml

from .errors import OpkitError
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
        for d in sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.j2"))):
            out[d.name] = str(meta(d.name, lang).get("summary", ""))
    return out


def meta(family: str, lang: str = "ascendc") -> dict:
    f = family_dir(family, lang) / "family.yaml"
    return (yaml.safe_load(f.read_text()) or {}) if f.is_file() else {}


def parse_data(pairs: tuple[str, ...] | list[str]) -> dict:
    """``k=v`` strings (``--data``) -> dict; values read as YAML scalars (``true`` is a bool)."""
    out = {}
    for p in pairs:
        k, eq, v = p.partition("=")
        if not eq or not k.strip():
            raise OpkitError(f"--data {p!r}: expected KEY=VALUE, e.g. --data norm=rms")
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
    # Block tags sit on their own lines in the templates: trim them with their newline and indent.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(root)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    ctx = context(name, snake, family, full)
    out: dict[str, bytes] = {}
    for p in sorted(root.iterdir()):
        if p.is_file() and p.name.endswith(".j2"):
            out[p.name[:-3]] = env.get_template(p.name).render(ctx).encode()
    return out
