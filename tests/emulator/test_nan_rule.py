"""The emulator's NaN rule (opkit_emu/nan_rule.h, docs/emulator.md "NaN rule"): a floating operation whose result is
NaN returns src0's NaN quieted, else src1's quieted, else the default NaN 0xFFC00000 -- whatever operand order the
compiler emitted and whatever the ISA level. nan_rule_probe.cpp runs the element loops (Add / Sub / Mul / Div / Max /
Min in each aliasing form, Adds / Muls / Maxs / Mins, ReduceSum's tree and its repeats' sum; in a kernel Axpy,
MulAddDst, level-0 Add and Adds) compiled at -O2 at every ISA level up to this host's (x86-64 to x86-64-v3 on an AVX2 host, to
x86-64-v4 on AVX-512; armv8-a on Arm). Without the rule GCC's vector loops at -O2 return src1's NaN for Add and Mul."""
from __future__ import annotations

import subprocess

import pytest

from conftest import HOST_LEVELS, build_probe

P, Q, S = 0x7FC00001, 0xFFC00002, 0x7F800003   # quiet +NaN payload 1, quiet -NaN payload 2, signalling +NaN payload 3
ONE, INF, NINF, ZERO = 0x3F800000, 0x7F800000, 0xFF800000, 0
DEFAULT_NAN = 0xFFC00000


def _is_nan(b: int) -> bool:
    return b & 0x7FFFFFFF > INF


def _quiet(b: int) -> int:
    return b | 0x00400000


def _cases() -> list[tuple[str, str, int, int, int]]:
    """(op, form, src0 bits, src1 bits, the rule's result bits)."""
    cases = []
    for op in ("Add", "Sub", "Mul", "Div"):
        for form in ("distinct", "dst_is_a", "dst_is_b"):
            for a, b in ((P, Q), (Q, P), (S, Q), (Q, S), (P, ONE), (ONE, Q)):
                cases.append((op, form, a, b, _quiet(a) if _is_nan(a) else _quiet(b)))
            # invalid operations: the default NaN, not the host's (an Arm host's is 0x7FC00000)
            a, b = {"Add": (INF, NINF), "Sub": (INF, INF), "Mul": (ZERO, INF), "Div": (ZERO, ZERO)}[op]
            cases.append((op, form, a, b, DEFAULT_NAN))
    for op in ("Add", "Mul"):
        for form in ("scalar", "scalar_inplace"):
            for a, b in ((P, Q), (Q, P), (S, Q), (Q, S), (ONE, Q)):   # a NaN scalar: the rule's loop
                cases.append((op, form, a, b, _quiet(a) if _is_nan(a) else _quiet(b)))
            for a in (P, Q, S):   # a scalar that is not NaN: the plain loop (x86), the NaN src0's all the same
                cases.append((op, form, a, ONE, _quiet(a)))
            a, b = {"Add": (INF, NINF), "Mul": (INF, ZERO)}[op]
            cases.append((op, form, a, b, DEFAULT_NAN))
    for a in (P, Q, S):   # Muls by a literal -1: not folded into -x (which would flip the NaN's sign)
        cases.append(("MulsNeg1", "scalar", a, ONE, _quiet(a)))
    # Max / Min select an input: its NaN as it is, src0's first
    for op in ("Max", "Min"):
        for form in ("distinct", "dst_is_a", "dst_is_b", "scalar", "scalar_inplace"):
            for a, b in ((P, Q), (Q, P), (S, ONE), (ONE, S)):
                cases.append((op, form, a, b, a if _is_nan(a) else b))
    # the API forms in a kernel: the fused forms (product, then + dst 0), level-0 Add and Adds
    for op in ("Axpy", "MulAddDst", "Add0", "Adds0"):
        for a, b in ((P, Q), (Q, P), (S, Q), (P, ONE), (ONE, Q)):
            cases.append((op, "kernel", a, b, _quiet(a) if _is_nan(a) else _quiet(b)))
        a, b = {"Axpy": (INF, ZERO), "MulAddDst": (ZERO, INF), "Add0": (INF, NINF), "Adds0": (NINF, INF)}[op]
        cases.append((op, "kernel", a, b, DEFAULT_NAN))
    for form in ("tree", "repeats"):   # element 0 and element 1 (one repeat's tree) or 64 (the next repeat)
        for a, b in ((P, Q), (Q, P)):
            cases.append(("ReduceSum", form, a, b, _quiet(a)))
        cases.append(("ReduceSum", form, INF, NINF, DEFAULT_NAN))
    return cases


@pytest.mark.parametrize("level", HOST_LEVELS)
def test_element_loops_return_the_rules_nan(level, tmp_path):
    exe = build_probe("nan_rule_probe", level, tmp_path)
    cases = _cases()
    stdin = "".join(f"{op} {form} {a:x} {b:x}\n" for op, form, a, b, _ in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.split()
    assert len(out) == len(cases)
    wrong = [(op, form, f"{a:08x}", f"{b:08x}", got, f"{want:08x}")
             for (op, form, a, b, want), got in zip(cases, out) if int(got, 16) != want]
    assert wrong == [], f"at {level}: (op, form, src0, src1, got, want): {wrong[:12]}"
