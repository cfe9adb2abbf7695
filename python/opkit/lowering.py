"""The one lowering of op.yaml that every target renders from.

``lower(spec)`` turns an OpSpec into plain dataclasses (`Op`, `Input`, `Output`, `Attr`, `Variant`) whose
fields are what C++ templates need: each dtype and attr type is looked up in ONE table here, which spells
it for torch, the AscendC kernel (C++), ATen (`at::`), CANN graph mode (`ge::`, msopgen's ops.json) and
opkit's host headers (`opkit::DType`). Templates spell the C++ statements themselves (targets/<t>/templates);
nothing here writes C++ code, only names and literals.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DType:
    name: str       # op.yaml spelling
    torch: str      # torch.<attr>
    cpp: str        # AscendC kernel type (DTYPE_<NAME> macros)
    tag: str        # short tag for files, ids and kernel entry suffixes
    at: str         # ATen ScalarType constant
    ge: str         # CANN graph engine ge::DataType
    msopgen: str    # msopgen ops.json "type"
    opkit: str      # opkit::DType (python/opkit/include/opkit/tiling.h)


DTYPES: dict[str, DType] = {d.name: d for d in (
    DType("float16", "float16", "half", "fp16", "at::kHalf", "ge::DT_FLOAT16", "float16", "opkit::DType::Float16"),
    DType("bfloat16", "bfloat16", "bfloat16_t", "bf16", "at::kBFloat16", "ge::DT_BF16", "bfloat16",
          "opkit::DType::BFloat16"),
    DType("float32", "float32", "float", "fp32", "at::kFloat", "ge::DT_FLOAT", "float", "opkit::DType::Float32"),
    DType("int32", "int32", "int32_t", "i32", "at::kInt", "ge::DT_INT32", "int32", "opkit::DType::Int32"),
    DType("int64", "int64", "int64_t", "i64", "at::kLong", "ge::DT_INT64", "int64", "opkit::DType::Int64"),
    DType("bool", "bool", "bool", "bool", "at::kBool", "ge::DT_BOOL", "bool", "opkit::DType::Bool"),
)}


@dataclass(frozen=True)
class AttrType:
    name: str       # op.yaml / torch schema type
    cpp: str        # the C++ parameter type torch passes to a kernel for that schema type
    ctx: str        # opkit::TilingContext map the value goes to
    ge_getter: str  # gert::RuntimeAttrs::GetAttrPointer<T> in CANN's op_host
    ge_setter: str  # OpDef Attr(..).<Setter>() in CANN's op_host
    msopgen: str    # msopgen ops.json attr type
    opcommand: str  # the value as torch_npu's OpCommand::Attr takes it ({} = the parameter)

    def opcommand_arg(self, name: str) -> str:
        """The C++ argument of ``OpCommand::Attr("<name>", ...)`` for a parameter called ``name``."""
        return self.opcommand.format(name)


ATTR_TYPES: dict[str, AttrType] = {a.name: a for a in (
    AttrType("float", "double", "float_attrs", "float", "Float", "float", "static_cast<float>({})"),
    AttrType("int", "int64_t", "int_attrs", "int64_t", "Int", "int", "{}"),
    AttrType("bool", "bool", "int_attrs", "bool", "Bool", "bool", "{}"),
    AttrType("str", "c10::string_view", "str_attrs", "char", "String", "string", "std::string({})"),
)}

_REDUCE = re.compile(r"reduce\(\s*(\w+)\s*,\s*(\w+)\s*(?:,\s*(\w+)\s*)?\)\Z")


def cpp_str(s: Any) -> str:
    """A C++ string literal."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpp_literal(value: Any, type_: str) -> str:
    """An attr value as a C++ literal of the binding's parameter type (c10::string_view compares with "...")."""
    if type_ == "str":
        return cpp_str(value)
    if type_ == "bool":
        return "true" if value else "false"
    if type_ == "float":
        return repr(float(value))
    return str(int(value))


@dataclass(frozen=True)
class Input:
    name: str
    index: int
    shape: tuple                # op.yaml tokens
    moves: bool                 # moved with the `dim` attr's dim (same shape rule as the lead)
    ellipsis: bool              # shape starts with "..."
    fixed_rank: int             # number of tokens besides "..."


@dataclass(frozen=True)
class Output:
    name: str
    index: int
    dtype: DType | None         # the returned dtype; None: the lead input's
    kernel_dtype: DType | None  # what the kernel writes; None: same as `dtype`
    zero: bool                  # allocated zero-filled (kernels may accumulate into kernel_dtype outputs)
    like: str | None            # same shape as this input (kernel view); None for a reduce
    reduce_src: str | None = None
    reduce_dim: str | None = None
    reduce_keep: str | None = None   # keepdim attr name, or None

    @property
    def converts(self) -> bool:
        return self.kernel_dtype is not None and self.kernel_dtype != self.dtype

    def kernel_dtype_for(self, lead: DType) -> DType:
        return self.kernel_dtype or self.dtype or lead


@dataclass(frozen=True)
class Attr:
    name: str
    index: int
    type: AttrType
    default: Any
    role: str | None            # None | "dim" | "keepdim"
    choices: tuple[str, ...]    # C++ literals of the allowed values (empty: any)
    choices_text: str           # the allowed values as op.yaml spells them, for messages


@dataclass(frozen=True)
class Variant:
    """One kernel compile: the lead dtype and the DTYPE_<NAME> definitions of every input and output.
    ``naive_on_demand``: the lead dtype is the op's compute dtype, so the naive variant (compute in the I/O dtype)
    is the same computation and nothing in opkit's own runs needs it (the harness reuses the opkit output): its
    module is built on the first call that asks for it (``torch.ops.opkit_naive`` in this dtype), not by
    `opkit build`, and only while the build folder's kernel_<dtype>.so is current (the folder's, not the one the
    process loaded; docs/cli.md "The fastest edit loop")."""
    dtype: DType
    defines: tuple[str, ...]
    naive_on_demand: bool = False

    @property
    def tag(self) -> str:
        return self.dtype.tag


@dataclass(frozen=True)
class DimCheck:
    """One shape rule of the op.yaml, on the kernel view of an input (after the `dim` move).

    kind "fixed": size(index) == value; "bind": first use of the named dim `value` (bound to `var`);
    "same": size(index) equals the named dim bound earlier (`var`, from input `owner`);
    "batch": the leading "..." dims equal those of input `owner` (whose fixed rank is `value`)."""
    kind: str
    input: str
    index: int
    value: Any
    var: str = ""
    owner: str = ""

    def size(self, prefix: str = "") -> str:
        """The C++ expression of the checked size on the tensor variable ``<prefix><input>``."""
        return f"{prefix}{self.input}.size({self.index})"


@dataclass(frozen=True)
class Op:
    spec: Any                   # the OpSpec (name, snake, dir, files, schema())
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    attrs: tuple[Attr, ...]
    variants: tuple[Variant, ...]
    dim_attr: str | None
    keep_attr: str | None
    dim_checks: tuple[DimCheck, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def snake(self) -> str:
        return self.spec.snake

    @property
    def lead(self) -> Input:
        return self.inputs[0]

    @property
    def moved_inputs(self) -> list[str]:
        return [i.name for i in self.inputs if i.moves]

    @property
    def gm_args(self) -> list[str]:
        """Kernel arguments in ABI order (docs/architecture.md "Kernel ABI")."""
        return [i.name for i in self.inputs] + [o.name for o in self.outputs] + ["workspace", "tiling"]

    @property
    def params(self) -> list[str]:
        """The C++ parameters of a kernel for this op's torch schema."""
        return [f"const at::Tensor& {i.name}" for i in self.inputs] + [f"{a.type.cpp} {a.name}" for a in self.attrs]

    @property
    def param_types(self) -> list[str]:
        return ["const at::Tensor&"] * len(self.inputs) + [a.type.cpp for a in self.attrs]

    @property
    def args(self) -> list[str]:
        return [i.name for i in self.inputs] + [a.name for a in self.attrs]

    @property
    def ret_type(self) -> str:
        n = len(self.outputs)
        return "at::Tensor" if n == 1 else f"std::tuple<{', '.join(['at::Tensor'] * n)}>"


def gm_params(names: list[str] | tuple[str, ...]) -> str:
    """``GM_ADDR a, GM_ADDR b``: kernel parameters for GM addresses (inputs, outputs, ...)."""
    return ", ".join(f"GM_ADDR {n}" for n in names)


def kernel_entry(snake: str, io: list[str] | tuple[str, ...], width: int = 120) -> str:
    """The kernel's ``extern "C"`` entry line (docs/architecture.md "Kernel ABI"): ``GM_ADDR`` parameters for
    the inputs and outputs in op.yaml order, then workspace and tiling, wrapped under the open parenthesis
    so no line passes ``width`` columns. The family templates render every entry through this."""
    head = f'extern "C" __global__ __aicore__ void {snake}('
    params = gm_params((*io, "workspace", "tiling")).split(", ")
    lines, line = [], head
    for k, p in enumerate(params):
        piece = p + (", " if k + 1 < len(params) else ") {")
        if line != head and line.strip() and len(line.rstrip()) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece
    return "\n".join(lines + [line])


def lower(spec) -> Op:
    """The lowering of one validated OpSpec (spec.py has checked names, dtypes and shape rules)."""
    names = [i.name for i in spec.inputs]
    dim_attr = next((a.name for a in spec.attrs if a.role == "dim"), None)
    keep_attr = next((a.name for a in spec.attrs if a.role == "keepdim"), None)
    lead_shape = tuple(spec.lead.shape)
    inputs = tuple(Input(i.name, k, tuple(i.shape), bool(dim_attr) and tuple(i.shape) == lead_shape,
                         "..." in i.shape, len([t for t in i.shape if t != "..."]))
                   for k, i in enumerate(spec.inputs))
    outputs = []
    for k, o in enumerate(spec.outputs):
        fixed = None if o.dtype in names else DTYPES[o.dtype]
        kd = DTYPES[o.kernel_dtype] if o.kernel_dtype else None
        like = o.shape if o.shape in names else None
        src = dim = keep = None
        if like is None:
            m = _REDUCE.match(o.shape)
            if not m:
                raise ValueError(f"{spec.dir / 'op.yaml'}: outputs.{o.name}.shape: {o.shape!r} is neither an "
                                 "input name nor reduce(<input>, <dim attr>[, <keepdim attr>])")
            src, dim, keep = m.group(1), m.group(2), m.group(3)
        outputs.append(Output(o.name, k, fixed, kd, kd is not None, like, src, dim, keep))
    attrs = tuple(Attr(a.name, k, ATTR_TYPES[a.type], a.default, a.role,
                       tuple(cpp_literal(c, a.type) for c in a.choices), ", ".join(str(c) for c in a.choices))
                  for k, a in enumerate(spec.attrs))
    variants = []
    for d in spec.dtypes:
        lead = DTYPES[d]
        defines = [f"DTYPE_{i.name.upper()}={lead.cpp}" for i in spec.inputs]   # non-lead inputs take the lead's
        defines += [f"DTYPE_{o.name.upper()}={o.kernel_dtype_for(lead).cpp}" for o in outputs]
        variants.append(Variant(lead, tuple(defines), naive_on_demand=(d == spec.compute_dtype)))
    return Op(spec, inputs, tuple(outputs), attrs, tuple(variants), dim_attr, keep_attr, _dim_checks(inputs))


def _dim_checks(inputs: tuple[Input, ...]) -> tuple[DimCheck, ...]:
    """Named dims bind across inputs; fixed dims must match; leading "..." dims match the first owner's."""
    out: list[DimCheck] = []
    bound: dict[str, tuple[str, str]] = {}
    batch_owner: Input | None = None
    for i in inputs:
        toks = [t for t in i.shape if t != "..."]
        if i.ellipsis:
            if batch_owner is None:
                batch_owner = i
            else:
                out.append(DimCheck("batch", i.name, i.fixed_rank, batch_owner.fixed_rank, owner=batch_owner.name))
        for pos, t in enumerate(toks):
            idx = pos - len(toks) if i.ellipsis else pos
            if isinstance(t, int):
                out.append(DimCheck("fixed", i.name, idx, t))
            elif t in bound:
                var, owner = bound[t]
                out.append(DimCheck("same", i.name, idx, t, var, owner))
            else:
                bound[t] = (f"opk_dim_{t}", i.name)
                out.append(DimCheck("bind", i.name, idx, t, f"opk_dim_{t}", i.name))
    return tuple(out)
