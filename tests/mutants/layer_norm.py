"""Mutants of LayerNormFP32 for the harness's sensitivity tests (issue 4, acceptance).

Each mutant is a renamed copy of ``ops/layer_norm_fp32`` with one bug injected by an exact text edit of
its kernel.cpp. An edit whose text no longer occurs in the kernel raises MutantStale, so a rewritten kernel
makes the test fail loudly instead of silently testing an unmutated op. ``expect_fail(case)`` says which
cases the bug must break (the harness must fail them, and only them where a predicate is exact).
The copies drop op.yaml's ``backward:`` (the backward op is not copied into the test workspace).
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Callable

SOURCE_OP = "layer_norm_fp32"
SOURCE_NAME = "LayerNormFP32"
CORES = 48


class MutantStale(AssertionError):
    pass


def _cols(c: dict) -> int:
    return c["shapes"]["x"][-1]


def _rows(c: dict) -> int:
    return prod(c["shapes"]["x"][:-1])


@dataclass(frozen=True)
class Mutant:
    name: str                                   # CamelCase op name of the copy
    what: str
    edits: tuple[tuple[str, str], ...]          # (exact text in kernel.cpp, replacement)
    # which cases must fail: an exact predicate (True: must fail, False: must pass, None: no claim),
    # or no predicate when the bug's reach depends on the values
    must_fail_only: Callable[[dict], bool | None] | None = None
    # distributions (tags) among which failures must appear
    failing_distributions: tuple[str, ...] = field(default=())

    @property
    def snake(self) -> str:
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", self.name).lower().replace("f_p32", "fp32")


MUTANTS = (
    Mutant(
        "LayerNormMutTailFP32", "row tail not handled: statistics and output cover cols rounded down to 16",
        (("const float var = CentreRow(xc[r * pitch], cols, &c);",
          "const float var = CentreRow(xc[r * pitch], cols / 16 * 16, &c);"),
         ("static_cast<float>(rstd.GetValue(r)), cols);",
          "static_cast<float>(rstd.GetValue(r)), cols / 16 * 16);")),
        # the edit is in the single-pass path (rows up to ~6700 elements fit UB); longer rows: no claim
        must_fail_only=lambda c: (_cols(c) % 16 != 0) if _cols(c) <= 6000 else None),
    Mutant(
        "LayerNormMutRowsFP32", "remainder rows dropped: every block runs rowsPerBlock rows only",
        (("myRows_ = mine.count;", "myRows_ = td.rowsPerBlock;"),),
        must_fail_only=lambda c: _rows(c) > CORES and _rows(c) % CORES != 0),
    Mutant(
        "LayerNormMutHalfAccFP32", "mean/variance sums accumulated (rounded) in fp16",
        (("return static_cast<float>(red.GetValue(0));",
          "return static_cast<float>(static_cast<half>(static_cast<float>(red.GetValue(0))));"),),
        failing_distributions=("offset200", "scale50")),
    Mutant(
        "LayerNormMutEpsFP32", "eps ignored",
        (("Adds(var, var, static_cast<CT>(td_.eps), n);", "Adds(var, var, static_cast<CT>(0.0f), n);"),),
        failing_distributions=("tiny",)),
    Mutant(
        "LayerNormMutGammaFP32", "gamma read one element late",
        (("CopyRowsIn(w, wGm_[c0], 1, n);", "CopyRowsIn(w, wGm_[c0 + 1], 1, n);"),),
        failing_distributions=("normal",)),
)


def copy_op(src: Path, dst_ops: Path, name: str, edits=()) -> Path:
    """Copy ops/<src> to dst_ops/<snake of name>, renamed to ``name``, with ``edits`` applied to kernel.cpp."""
    snake = Mutant(name, "", ()).snake if name != SOURCE_NAME else SOURCE_OP
    dst = dst_ops / snake
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.orig"))
    for f in dst.iterdir():
        if f.suffix in (".cpp", ".h", ".py", ".yaml"):
            text = f.read_text()
            text = text.replace(SOURCE_NAME, name).replace(SOURCE_OP, snake)
            if f.name == "op.yaml":
                text = re.sub(r"(?m)^backward:\n(?:[ \t]+.*\n)+", "", text)
            f.write_text(text)
    kernel = dst / "kernel.cpp"
    text = kernel.read_text()
    for old, new in edits:
        old_r, new_r = old.replace(SOURCE_NAME, name).replace(SOURCE_OP, snake), new
        if text.count(old_r) != 1:
            raise MutantStale(f"{name}: the edit target occurs {text.count(old_r)} times in {kernel} "
                              f"(expected once): {old!r}; update tests/mutants/layer_norm.py for the new kernel")
        text = text.replace(old_r, new_r)
    kernel.write_text(text)
    return dst
