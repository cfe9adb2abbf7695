"""YAML nodes that remember their line, and a checker that collects every error before raising.

PyYAML's composed nodes keep line numbers, so every message names ``<file>:<line>: <field>: <what was
expected>`` (the field as a dotted path such as ``inputs[1].shape``). ``check.py`` uses the typed accessors
to read op.yaml.
"""
from __future__ import annotations

from pathlib import Path

import yaml as _yaml

from ..errors import OpkitError, SpecError


def _construct(node):
    """A node's python value, by safe_load's own constructors (a fresh one: it memoises every node)."""
    return _yaml.constructor.SafeConstructor().construct_object(node, deep=True)


class Node:
    """A YAML value with its line, plus its dotted field path (for messages)."""

    __slots__ = ("value", "line", "path")

    def __init__(self, value, line: int, path: str):
        self.value, self.line, self.path = value, line, path


def wrap(node, path: str):
    """yaml node -> Node tree (mappings: dict[str, Node], sequences: list[Node], scalars: python)."""
    line = node.start_mark.line + 1
    if isinstance(node, _yaml.MappingNode):
        out: dict[str, Node] = {}
        for k, v in node.value:
            key = str(k.value if isinstance(k, _yaml.ScalarNode) else _construct(k))
            out[key] = wrap(v, f"{path}.{key}" if path else key)
            out[key].line = v.start_mark.line + 1
        return Node(out, line, path)
    if isinstance(node, _yaml.SequenceNode):
        return Node([wrap(v, f"{path}[{i}]") for i, v in enumerate(node.value)], line, path)
    # Scalars: resolved by safe_load's own constructor (1e-5 -> float, true -> bool, ...); a round trip
    # through serialize + safe_load per scalar made reading the bundled specs cost ~1 s of every command.
    return Node(_construct(node), line, path)


class Checker:
    def __init__(self, file: Path):
        self.file = file
        self.errors: list[tuple[int, str]] = []

    def error(self, node: Node | None, msg: str, line: int | None = None, field: str | None = None) -> None:
        ln = line if line is not None else (node.line if node is not None else 1)
        fld = field if field is not None else (node.path if node is not None else "")
        self.errors.append((ln, f"{self.file}:{ln}: {fld or '<document>'}: {msg}"))

    def raise_if_any(self) -> None:
        if self.errors:
            self.errors.sort(key=lambda e: e[0])
            raise SpecError("\n".join(m for _, m in self.errors))

    # typed accessors: return the python value or None after recording an error
    def mapping(self, node: Node, keys: tuple[str, ...], required: tuple[str, ...] = ()) -> dict | None:
        if not isinstance(node.value, dict):
            self.error(node, f"expected a mapping with keys {', '.join(keys)}; got {kind(node.value)}")
            return None
        for k, v in node.value.items():
            if k not in keys:
                self.error(v, f"unknown field {k!r}; expected one of: {', '.join(keys)}",
                           field=f"{node.path}.{k}" if node.path else k)
        for k in required:
            if k not in node.value:
                self.error(node, f"missing required field {k!r}",
                           field=f"{node.path}.{k}" if node.path else k)
        return node.value

    def seq(self, node: Node, what: str, allow_empty: bool = False) -> list | None:
        if not isinstance(node.value, list):
            self.error(node, f"expected a list of {what}; got {kind(node.value)}")
            return None
        if not node.value and not allow_empty:
            self.error(node, f"expected at least one {what}; got an empty list")
            return None
        return node.value

    def string(self, node: Node, what: str, choices: tuple[str, ...] = ()) -> str | None:
        v = node.value
        if not isinstance(v, str):
            self.error(node, f"expected {what}; got {kind(v)} {v!r}")
            return None
        if choices and v not in choices:
            self.error(node, f"{v!r} is not allowed; expected one of: {', '.join(choices)}")
            return None
        return v

    def integer(self, node: Node, what: str, minimum: int | None = None) -> int | None:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int):
            self.error(node, f"expected {what}; got {kind(v)} {v!r}")
            return None
        if minimum is not None and v < minimum:
            self.error(node, f"expected {what} >= {minimum}; got {v}")
            return None
        return v

    def identifier(self, node: Node, what: str) -> str | None:
        from .names import check_identifier
        v = self.string(node, what)
        if v is None:
            return None
        try:
            check_identifier(v, what)
        except OpkitError as e:
            self.error(node, str(e))
            return None
        return v


def kind(v) -> str:
    if v is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a bool", int: "an int",
            float: "a float"}.get(type(v), type(v).__name__)
