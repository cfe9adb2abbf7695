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

import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ..spec import DTYPES, OpSpec

# op.yaml dtype -> at::ScalarType constant / ge::DataType (graph-mode package) / opkit::DType
AT_DTYPE = {"float16": "at::kHalf", "bfloat16": "at::kBFloat16", "float32": "at::kFloat", "int32": "at::kInt",
            "int64": "at::kLong", "bool": "at::kBool"}
GE_DTYPE = {"float16": "ge::DT_FLOAT16", "bfloat16": "ge::DT_BF16", "float32": "ge::DT_FLOAT", "int32": "ge::DT_INT32",
            "int64": "ge::DT_INT64", "bool": "ge::DT_BOOL"}
MSOPGEN_DTYPE = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float", "int32": "int32",
                 "int64": "int64", "bool": "bool"}
OPKIT_DTYPE = {"float16": "opkit::DType::Float16", "bfloat16": "opkit::DType::BFloat16",
               "float32": "opkit::DType::Float32", "int32": "opkit::DType::Int32", "int64": "opkit::DType::Int64",
               "bool": "opkit::DType::Bool"}
ATTR_CPP = {"float": "double", "int": "int64_t", "bool": "bool", "str": "c10::string_view"}
_REDUCE = re.compile(r"reduce\(\s*(\w+)\s*,\s*(\w+)\s*(?:,\s*(\w+)\s*)?\)\Z")


def templates_root() -> Path:
    try:
        from ..workspace import templates_dir
        return templates_dir()
    except Exception:                                        # source checkout before workspace.py
        return Path(__file__).resolve().parents[3] / "templates"


def env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_root())),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True)


def cpp_str(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class DtypeVariant:
    dtype: str              # op.yaml name of the lead dtype
    tag: str                # fp16 / bf16 / fp32
    at: str                 # at::kHalf ...
    launch: str             # aclrtlaunch_<entry>_<tag>
    target: str             # CMake target of this variant's kernel
    defines: list[str]      # <entry>=<entry>_<tag>, DTYPE_<NAME>=<c++ type>, ...


@dataclass
class OutputGlue:
    name: str
    index: int
    dtype_expr: str         # C++ expression of the returned dtype (lead dtype or a fixed one)
    kernel_dtype_expr: str  # what the kernel writes
    converts: bool
    zero: bool              # zero-filled: kernels may accumulate into kernel_dtype outputs (atomic add)
    like: str | None        # same shape as this input (kernel view), or None for reduce
    reduce_src: str | None = None
    reduce_dim: str | None = None
    reduce_keep: str | None = None   # attr name or None (no keepdim)


@dataclass
class OpGlue:
    spec: OpSpec
    ns: str
    variants: list[DtypeVariant]
    outputs: list[OutputGlue]
    dim_attr: str | None
    moved_inputs: list[str]          # inputs moved with the lead's dim

    @property
    def snake(self) -> str:
        return self.spec.snake

    @property
    def gm_args(self) -> list[str]:
        return [i.name for i in self.spec.inputs] + [o.name for o in self.spec.outputs] + ["workspace", "tiling"]


def _ctype(dtype: str) -> str:
    return DTYPES[dtype][1]


def op_glue(spec: OpSpec) -> OpGlue:
    names = {i.name for i in spec.inputs}
    dim_attr = next((a.name for a in spec.attrs if a.role == "dim"), None)
    lead_tokens = tuple(spec.lead.shape)
    moved = [i.name for i in spec.inputs if dim_attr and tuple(i.shape) == lead_tokens]
    outputs = []
    for k, o in enumerate(spec.outputs):
        fixed = None if o.dtype in names else o.dtype
        kd = o.kernel_dtype or fixed
        g = OutputGlue(name=o.name, index=k,
                       dtype_expr="lead_dtype" if fixed is None else AT_DTYPE[fixed],
                       kernel_dtype_expr="lead_dtype" if kd is None else AT_DTYPE[kd],
                       converts=o.kernel_dtype is not None and o.kernel_dtype != (fixed or ""),
                       zero=o.kernel_dtype is not None,
                       like=o.shape if o.shape in names else None)
        m = _REDUCE.match(o.shape)
        if g.like is None:
            if not m:
                raise ValueError(f"{spec.dir / 'op.yaml'}: outputs.{o.name}.shape: {o.shape!r} is neither an "
                                 "input name nor reduce(<input>, <dim attr>[, <keepdim attr>])")
            g.reduce_src, g.reduce_dim, g.reduce_keep = m.group(1), m.group(2), m.group(3)
        outputs.append(g)
    variants = []
    for d in spec.dtypes:
        tag = DTYPES[d][2]
        defines = [f"{spec.snake}={spec.snake}_{tag}"]
        defines += [f"DTYPE_{i.name.upper()}={_ctype(d)}" for i in spec.inputs]
        for o in spec.outputs:
            od = o.kernel_dtype or (d if o.dtype in names else o.dtype)
            defines.append(f"DTYPE_{o.name.upper()}={_ctype(od)}")
        variants.append(DtypeVariant(d, tag, AT_DTYPE[d], f"aclrtlaunch_{spec.snake}_{tag}",
                                     f"opkit_kernel_{spec.snake}_{tag}", defines))
    return OpGlue(spec, f"opkit_npu_{spec.snake}", variants, outputs, dim_attr, moved)


@dataclass
class Settings:
    soc: str
    profile: str            # ascend910b | ascend310p
    vector_cores: int
    torch_version_macro: str   # V2R13
    host_include: Path      # python/opkit/include
    cxx11_abi: int = 1      # _GLIBCXX_USE_CXX11_ABI of the installed torch (2.13 wheels: 1)


def render_binding(glues: list[OpGlue], s: Settings) -> str:
    return env().get_template("npu/binding.cpp.j2").render(ops=glues, s=s, cpp_str=cpp_str,
                                                           opkit_dtype=OPKIT_DTYPE)


def render_cmake(glues: list[OpGlue], s: Settings, *, cann_root: Path, torch_dir: Path, torch_npu_dir: Path,
                 cmake_dir: Path, out_dir: Path, binding: Path) -> str:
    """The CMake project; the kernel prelude is expected next to the binding (render_prelude)."""
    return env().get_template("npu/CMakeLists.txt.j2").render(
        ops=glues, s=s, cann_root=cann_root, torch_dir=torch_dir, torch_npu_dir=torch_npu_dir,
        cmake_dir=cmake_dir, out_dir=out_dir, binding=binding, prelude=binding.parent / PRELUDE)


PRELUDE = "opkit_npu_kernel_prelude.h"


def render_prelude() -> str:
    return env().get_template("npu/kernel_prelude.h.j2").render()


def render_standin_header(glue: OpGlue, v: DtypeVariant) -> str:
    return env().get_template("npu/aclrtlaunch_standin.h.j2").render(op=glue, v=v)


def render_standin_defs(glues: list[OpGlue]) -> str:
    return env().get_template("npu/aclrtlaunch_standin_defs.cpp.j2").render(ops=glues)
