"""The op spec's data model: ``ops/<op>/op.yaml`` as plain frozen dataclasses.

Everything else in opkit (glue rendering, harness, NPU target, patching) reads these objects, never the
YAML; ``check.py`` builds them. Field meanings: docs/architecture.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OpkitError
from .distributions import DECLARABLE


# An output shape that reduces an input: ``reduce(<input>, <dim attr>[, <keepdim attr>])``.
REDUCE_SHAPE = re.compile(r"reduce\(\s*(\w+)\s*,\s*(\w+)\s*(?:,\s*(\w+)\s*)?\)\Z")

# attr type name in op.yaml -> the Python types its values may have
ATTR_TYPES = {"float": (int, float), "int": (int,), "bool": (bool,), "str": (str,),
              # lists (CANN's ListInt / ListFloat / ListBool attrs; `lang: cann` only, check.py)
              "int[]": (list,), "float[]": (list,), "bool[]": (list,)}
LIST_ATTR_TYPES = ("int[]", "float[]", "bool[]")


def attr_value_ok(typ: str, v) -> bool:
    """Whether `v` is a value of the op.yaml attr type `typ` (a bool is not an int or float; a list's elements
    are of its element type)."""
    if typ in LIST_ATTR_TYPES:
        return isinstance(v, list) and all(attr_value_ok(typ[:-2], x) for x in v)
    return isinstance(v, ATTR_TYPES[typ]) and not (typ in ("int", "float") and isinstance(v, bool))

# dtype names used in op.yaml -> (torch dtype attribute name, C++ kernel type, short tag for ids/files)
DTYPES: dict[str, tuple[str, str, str]] = {
    "float16": ("float16", "half", "fp16"),
    "bfloat16": ("bfloat16", "bfloat16_t", "bf16"),
    "float32": ("float32", "float", "fp32"),
    "int32": ("int32", "int32_t", "i32"),
    "int64": ("int64", "int64_t", "i64"),
    "bool": ("bool", "bool", "bool"),
}


def dtype_names(given, what: str = "--dtype") -> list[str]:
    """Dtype names from what a user typed (float16, fp16, half, ...); OpkitError names the bad one."""
    alias = {n: n for n in DTYPES} | {t[2]: n for n, t in DTYPES.items()} | {"half": "float16", "float": "float32"}
    out = []
    for d in [given] if isinstance(given, str) else given:
        if d not in alias:
            raise OpkitError(f"{what} {d}: not a dtype (one of {', '.join(sorted(alias))})")
        out.append(alias[d])
    return out


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[str | int, ...]        # tokens: int, named dim, or "..."
    dtypes: tuple[str, ...] = ()        # lead input only; others follow the lead's dtype
    values: str = "data"                # data | weight | bias | grad


@dataclass(frozen=True)
class OutputSpec:
    name: str
    dtype: str                          # an input name (same dtype) or a dtype name from DTYPES
    shape: str                          # an input name (same shape) or "reduce(x, dim, keepdim)"
    kernel_dtype: str | None = None     # dtype the kernel writes, if different (binding converts)


@dataclass(frozen=True)
class AttrSpec:
    name: str
    type: str                           # float | int | bool | str
    default: Any = None                 # None: required
    role: str | None = None             # None | "dim" | "keepdim"
    choices: tuple[Any, ...] = ()


@dataclass(frozen=True)
class BackwardSpec:
    op: str                             # snake name of the backward op
    args: tuple[str, ...]               # grad.<output> | <input> | out.<output> | attr.<attr>
    grads: dict[str, str]               # forward input name -> backward op output name


@dataclass(frozen=True)
class TestSpec:
    dims: dict[str, tuple[int, int]]
    max_numel: int = 4_000_000
    shapes: tuple[tuple[int, ...], ...] = ()
    distributions: tuple[str, ...] = DECLARABLE   # names from harness/distributions.py
    attrs: dict[str, tuple[Any, ...]] = field(default_factory=dict)   # attr -> values the matrix tries


@dataclass(frozen=True)
class AccuracySpec:
    standard: str = "mere_mare"         # mere_mare | bit_exact
    overrides: dict[str, dict[str, float]] = field(default_factory=dict)
    baseline_tolerance: float | None = None   # `opkit test --baseline`: allowed metric growth (None: 2x)


@dataclass(frozen=True)
class OpSpec:
    name: str                           # CamelCase, e.g. LayerNormFP32
    snake: str                          # layer_norm_fp32
    family: str
    summary: str
    inputs: tuple[InputSpec, ...]
    outputs: tuple[OutputSpec, ...]
    attrs: tuple[AttrSpec, ...]
    compute_dtype: str
    backward: BackwardSpec | None
    tests: TestSpec
    accuracy: AccuracySpec
    dir: Path                           # folder holding op.yaml
    bundled: bool = False               # lives in opkit's own ops/
    lang: str = "ascendc"               # ascendc (kernel.cpp) | tbe (kernel.py, docs/tbe.md) | cann (docs/cann.md)
    tbe: dict = field(default_factory=dict)   # lang tbe: {function: op function, soc: SoC the DSL checks}
    cann: dict = field(default_factory=dict)  # lang cann: {op_type: OpType, kernel: op_kernel/<op>.cpp} (docs/cann.md)
    auto_sync: bool = True              # false: the kernel is built as `--cce-auto-sync=off` (docs/emulator.md)

    @property
    def lead(self) -> InputSpec:
        return self.inputs[0]

    @property
    def dtypes(self) -> tuple[str, ...]:
        return self.lead.dtypes

    @property
    def tiling_struct(self) -> str:
        return f"{self.name}TilingData"

    @property
    def tiling_func(self) -> str:
        return f"{self.name}Tiling"

    @property
    def kernel_file(self) -> Path:
        if self.lang == "cann":
            return self.dir / self.cann.get("kernel", f"op_kernel/{self.snake}.cpp")
        return self.dir / ("kernel.py" if self.lang == "tbe" else "kernel.cpp")

    @property
    def tiling_file(self) -> Path:
        return self.dir / "tiling.h"

    @property
    def reference_file(self) -> Path:
        return self.dir / "reference.py"

    def schema(self) -> str:
        """The torch schema string, e.g. ``layer_norm_fp32(Tensor x, ..., float eps=1e-05) -> Tensor``."""
        args = [f"Tensor {i.name}" for i in self.inputs]
        for a in self.attrs:
            text = f"{a.type} {a.name}"
            if a.default is not None:
                text += "=" + _schema_default(a)
            args.append(text)
        outs = [f"Tensor {o.name}" for o in self.outputs]
        ret = outs[0].split()[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        return f"{self.snake}({', '.join(args)}) -> {ret}"


def _schema_default(a: AttrSpec) -> str:
    if a.type in LIST_ATTR_TYPES:
        elem = AttrSpec(a.name, a.type[:-2])
        return "[" + ", ".join(_schema_default(AttrSpec(a.name, elem.type, x)) for x in a.default) + "]"
    if a.type == "bool":
        return "True" if a.default else "False"
    if a.type == "str":
        return f'"{a.default}"'
    if a.type == "float":
        return repr(float(a.default))
    return str(int(a.default))
