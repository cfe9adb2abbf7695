"""Op names: the CamelCase name in op.yaml and the snake_case name derived from it.

Rule (docs/architecture.md "Names"): split before an upper-case letter that follows a lower-case
letter or digit, and before the last upper-case letter of an upper-case run that is followed by a
lower-case letter; digits stay with what precedes them. LayerNormFP32 -> layer_norm_fp32.
"""
from __future__ import annotations

import keyword
import re

from ..errors import OpkitError

_CAMEL = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*\Z")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# C++20 keywords and alternative tokens (names would become C++ identifiers in kernels and bindings).
CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires return short signed sizeof static static_assert
static_cast struct switch template this thread_local throw true try typedef typeid typename union
unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())

# Python keywords, soft keywords included (names become torch.ops attributes and reference.py kwargs).
PY_KEYWORDS = frozenset(keyword.kwlist) | frozenset(getattr(keyword, "softkwlist", ()))


def is_keyword(word: str) -> bool:
    return word in CPP_KEYWORDS or word in PY_KEYWORDS


def to_snake(name: str) -> str:
    """CamelCase -> snake_case (no validation; see check_op_name)."""
    return _SPLIT.sub("_", name).lower()


def check_op_name(name: str) -> str:
    """Validate a CamelCase op name and return its snake name; raise OpkitError saying what is wrong."""
    if not isinstance(name, str) or not name:
        raise OpkitError(f"op name {name!r} is empty; expected a CamelCase identifier such as LayerNormFP32")
    if not _CAMEL.match(name):
        why = ("starts with a lower-case letter" if name[0].islower() else
               "contains characters other than letters and digits" if not name.isalnum() or not name.isascii()
               else "does not start with an upper-case letter")
        raise OpkitError(f"op name {name!r} {why}; expected a CamelCase identifier "
                         f"(letters and digits, first letter upper-case), such as LayerNormFP32")
    snake = to_snake(name)
    if is_keyword(snake):
        raise OpkitError(f"op name {name!r} gives the snake name {snake!r}, a C++ or Python keyword; "
                         "pick another name")
    if not _SNAKE.match(snake):
        raise OpkitError(f"op name {name!r} gives the snake name {snake!r}, which is not a valid identifier")
    return snake


def check_identifier(name: str, what: str) -> None:
    """Input/output/attr names become C++ parameters and Python kwargs."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise OpkitError(f"{what} {name!r} is not an identifier; expected letters, digits and _")
    if is_keyword(name):
        raise OpkitError(f"{what} {name!r} is a C++ or Python keyword; pick another name")
