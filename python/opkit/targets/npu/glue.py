"""Render the NPU glue from OpSpecs: the torch_npu binding (one TU for all ops), the CMake project
that compiles each op's kernel per dtype with CANN's `ascendc_library`, and the check-only stand-ins.

Per-dtype entry names: the same `extern "C"` kernel entry compiled three times would collide in one
library, so each dtype is compiled as its own `ascendc_library` target with the compile definition
`<entry>=<entry>_<tag>` (tag fp16/bf16/fp32). CANN extracts the launch stubs from the *preprocessed*
source (ascendc_kernel_cmake/device_preprocess_project: `-E` with the target's definitions, then
util/extract_host_stub.py), so the generated launcher is `aclrtlaunch_<entry>_<tag>` in
`aclrtlaunch_<entry>_<tag>.h`. Each target is also a separate device link, so kernel classes that
share a name across dtypes do not merge.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from ...lowering import DTYPES, Op, cpp_str, lower
from ...opspec import OpSpec

TEMPLATES = Path(__file__).resolve().parent / "templates"


def env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True)


@dataclass
class DtypeVariant:
    dtype: str              # op.yaml name of the lead dtype
    tag: str                # fp16 / bf16 / fp32
    at: str                 # at::kHalf ...
    launch: str             # aclrtlaunch_<entry>_<tag>
    target: str             # CMake target of this variant's kernel
    defines: list[str]      # <entry>=<entry>_<tag>, DTYPE_<NAME>=<c++ type>, ...


@dataclass
class OpGlue:
    """The op's lowering (opkit/lowering.py) plus what the NPU build adds: per-dtype entry names."""
    low: Op
    ns: str
    variants: list[DtypeVariant]

    @property
    def spec(self) -> OpSpec:
        return self.low.spec

    @property
    def snake(self) -> str:
        return self.low.snake

    @property
    def outputs(self):
        return self.low.outputs

    @property
    def dim_attr(self) -> str | None:
        return self.low.dim_attr

    @property
    def moved_inputs(self) -> list[str]:
        return self.low.moved_inputs

    @property
    def gm_args(self) -> list[str]:
        return self.low.gm_args


def op_glue(spec: OpSpec) -> OpGlue:
    low = lower(spec)
    variants = []
    for v in low.variants:
        # the entry renamed per dtype: three compiles of one extern "C" entry cannot share a library
        defines = [f"{spec.snake}={spec.snake}_{v.tag}", *v.defines]
        variants.append(DtypeVariant(v.dtype.name, v.tag, v.dtype.at, f"aclrtlaunch_{spec.snake}_{v.tag}",
                                     f"opkit_kernel_{spec.snake}_{v.tag}", defines))
    return OpGlue(low, f"opkit_npu_{spec.snake}", variants)


@dataclass
class Settings:
    soc: str
    profile: str            # ascend910b | ascend310p
    vector_cores: int
    torch_version_macro: str   # V2R13
    host_include: Path      # python/opkit/include
    cxx11_abi: int = 1      # _GLIBCXX_USE_CXX11_ABI of the installed torch (2.13 wheels: 1)
    family: str = "ascend910b"   # CANN's short SoC: ASCEND_COMPUTE_UNIT, OpDef AddConfig (cann.Soc.family)


def render_binding(glues: list[OpGlue], s: Settings) -> str:
    return env().get_template("binding.cpp.j2").render(ops=glues, s=s, cpp_str=cpp_str)


PRELUDE = "opkit_npu_kernel_prelude.h"


def render_prelude() -> str:
    return env().get_template("kernel_prelude.h.j2").render()


def render_standin_header(glue: OpGlue, v: DtypeVariant) -> str:
    return env().get_template("aclrtlaunch_standin.h.j2").render(op=glue, v=v)


def render_standin_defs(glues: list[OpGlue]) -> str:
    return env().get_template("aclrtlaunch_standin_defs.cpp.j2").render(ops=glues)
