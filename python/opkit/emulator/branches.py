"""The `#if` branches a kernel source takes under the emulator's flags, decided from the text without a compiler.

The emulator compiles a kernel as CANN's CPU-debug build does (opkit.emulator.cflags(), opkit_emu/config.h):
`__CCE_KT_TEST__` and `ASCENDC_CPU_DEBUG` defined, `__CCE_AICORE__` 220 and `__NPU_ARCH__` 2201 (the A2). A tool that
reads a kernel's text (which entry, which tiling struct) decides the `#if`s on these and keeps every branch of any
other condition, so an Ascend 950 branch (`__CCE_AICORE__ == 310`) never counts for the A2.
"""
from __future__ import annotations

import re

KNOWN_MACROS = {"__CCE_KT_TEST__": 1, "ASCENDC_CPU_DEBUG": 1, "__CCE_AICORE__": 220, "__NPU_ARCH__": 2201}
_DIRECTIVE = re.compile(r"\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b(.*)")


def condition_value(cond: str, macros: dict = KNOWN_MACROS) -> bool | None:
    """The value of an `#if` condition over ``macros`` only; None when it names anything else."""
    e = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
               lambda m: "1" if (m.group(1) or m.group(2)) in macros else f"__undef_{m.group(1) or m.group(2)}",
               cond)
    e = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(macros.get(m.group(0), m.group(0))), e)
    if re.search(r"[A-Za-z_]", e.replace("&&", "").replace("||", "")):
        return None
    try:
        return bool(eval(e.replace("&&", " and ").replace("||", " or ").replace("!", " not ").replace(" not =", "!=")))
    except Exception:  # noqa: BLE001 -- an expression Python cannot read stays undecided
        return None


def emulator_branch(text: str, macros: dict = KNOWN_MACROS) -> str:
    """text with the `#if` branches the emulator's flags (``macros``) do not take removed; undecided conditions
    keep every branch (and their directives). ``macros={}`` decides only conditions on numbers (`#if 0`)."""
    out, stack = [], []  # per open #if: None when undecided, else [taking this branch, some branch taken]
    for ln in text.splitlines():
        d = _DIRECTIVE.match(ln)
        if d:
            kw, rest = d.group(1), d.group(2).strip()
            if kw in ("ifdef", "ifndef", "if"):
                if kw == "if":
                    v = condition_value(rest, macros)
                else:
                    v = condition_value(f"defined({rest})", macros)
                    if kw == "ifndef" and v is not None:
                        v = not v
                stack.append(None if v is None else [v, v])
                if v is not None:
                    continue
            elif kw in ("elif", "else") and stack and stack[-1] is not None:
                v = True if kw == "else" else condition_value(rest, macros)
                if v is None:  # an undecided #elif after decided branches: keep the rest as it is
                    v = not stack[-1][1]
                stack[-1] = [v and not stack[-1][1], stack[-1][1] or v]
                continue
            elif kw == "endif" and stack:
                if stack.pop() is not None:
                    continue
        if all(k is None or k[0] for k in stack):
            out.append(ln)
    return "\n".join(out)
