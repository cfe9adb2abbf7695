"""cann_survey.py DIR [DIR...] [--opbase DIR] [--json OUT] [--table OUT.md] [--jobs N] [--only REGEX] [--with-reference] [--no-run] [--any-chip]
-- CANN operator folders, unchanged, through `opkit import-cann`'s machinery (docs/cann.md "CANN's repositories").

Opt-in (not CI): each DIR is a checkout fetched locally (never vendored): hicann/ops-math, hicann/ops-nn, or a
folder of public custom-op projects. Every folder with op_host/ and op_kernel/ is a project; every OpType its
op_host sources register (OP_ADD / IMPL_OP_OPTILING) is an op. Counted apart, never as failures (the A2 survey
is of A2 vector kernels): an OpDef that names chips but not ascend910b (unless --any-chip), a kernel file that is an Ascend 950 entry
(`*_apt.cpp`, `op_kernel/archNN/` other than arch22), no kernel file for the op, a cube/mix kernel
(KERNEL_TYPE_AIC_ONLY / KERNEL_TYPE_MIX_*).

  compiles   the kernel in the translation unit import-cann builds (python/opkit/cannproject/kernel.py: the
             kernel's view of the op's tiling registrations first, the entry renamed), $(opkit cflags), CANN's
             kernel libraries (opbase atvoss/, op_kernel/) on the path as CANN's build has them
             (cannproject/libs.py), DTYPE_<NAME> from the OpDef's first DataType column; a templated entry is
             instantiated with EVERY template-argument combination its ASCENDC_TPL_SEL selects
             (cannproject/instances.py: a DATATYPE parameter as its C++ type where the entry takes a typename)
  right      for ops with an obvious PyTorch equivalent (REFERENCES): the op's own host code (InferShape +
             TilingFunc, opbase's host library linked in) on opkit's CPU context, the kernel on the emulator,
             per floating dtype column on an aligned shape and a ragged one, against the reference (fp32
             golden from fp64 inputs), judged by CANN's own criterion: TTK's stat_rel_err (MERE < T, MARE < 10 T,
             T = 2^-13 fp32, 2^-10 fp16, 2^-7 bf16; python/opkit/cannproject/ttk.py).
             An op with a reference that does not compile counts as not right: the denominator is every op
             with a reference.

Prints one line per op, then per DIR the rates and the failures grouped by cause. --table writes the per-
repository table docs/cann.md shows (with each DIR's git commit). The work folder is deleted at the end.
Exit 0 always: the figures are the output.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from opkit import emulator  # noqa: E402
from opkit.cannproject import instances, layout, libs, ttk  # noqa: E402
from opkit.cannproject.kernel import ENTRY_PREFIX, kernel_source  # noqa: E402
from opkit.cannproject.op import CannOp  # noqa: E402
from opkit.cannproject.tiling_view import view_for  # noqa: E402
from opkit.errors import OpkitError  # noqa: E402

GE_CXX = {"DT_FLOAT": "float", "DT_FLOAT16": "half", "DT_BF16": "bfloat16_t", "DT_INT32": "int32_t",
          "DT_INT8": "int8_t", "DT_UINT8": "uint8_t", "DT_INT16": "int16_t", "DT_INT64": "int64_t",
          "DT_BOOL": "bool", "DT_UINT32": "uint32_t", "DT_DOUBLE": "double"}
CXX_GE = {v: k for k, v in GE_CXX.items()}  # the kernel's C++ type -> its DT_ name (kernel_type.h defines them)


def _one(f):
    return lambda x, **a: f(x)


def _two(f):
    return lambda x, y, **a: f(x, y)


# snake op name -> reference over the inputs in OpDef order (attrs by name). Only ops whose meaning is plain from
# the name; "*_v2" ops of ops-math are the same math as the torch function of the stem.
REFERENCES = {
    "add": _two(torch.add), "add_v2": _two(torch.add), "add_custom": _two(torch.add), "add_example": _two(torch.add),
    "sub": _two(torch.sub), "sub_v2": _two(torch.sub), "mul": _two(torch.mul), "mul_v2": _two(torch.mul),
    "div": _two(torch.div), "real_div": _two(torch.div), "maximum": _two(torch.maximum),
    "maximum_v2": _two(torch.maximum), "minimum": _two(torch.minimum), "atan2": _two(torch.atan2),
    "pows": _two(torch.pow), "pow": _two(torch.pow), "squared_difference": _two(lambda x, y: (x - y) ** 2),
    "log_add_exp": _two(torch.logaddexp), "heaviside": _two(torch.heaviside), "fmax": _two(torch.fmax),
    "fmin": _two(torch.fmin), "xlogy": _two(torch.xlogy),
    "abs": _one(torch.abs), "exp": lambda x, base=-1.0, scale=1.0, shift=0.0, **a: (
        torch.exp(x * scale + shift) if base in (-1, -1.0) else torch.pow(base, x * scale + shift)),
    "log": lambda x, base=-1.0, scale=1.0, shift=0.0, **a: (
        torch.log(x * scale + shift) / (1.0 if base in (-1, -1.0) else torch.log(torch.tensor(base)))),
    "sqrt": _one(torch.sqrt), "rsqrt": _one(torch.rsqrt), "sigmoid": _one(torch.sigmoid), "tanh": _one(torch.tanh),
    "relu": _one(torch.relu),
    # ops-nn's A2 Gelu documents its own tanh approximation, with 0.0455399241 for tanh-GELU's 0.044715
    # (ops-nn@e5c3fa93 experimental/activation/gelu/README.md:21, op_kernel/gelu.h:29-32); F.gelu(approximate="tanh")
    # differs by ~8 % at x = -4
    "gelu": _one(lambda x: x / (1 + torch.exp(-1.595769122 * (x + 0.0455399241 * x ** 3)))),
    "silu": _one(F.silu), "asinh": _one(torch.asinh), "acosh": _one(torch.acosh), "atanh": _one(torch.atanh),
    "sinh": _one(torch.sinh), "sinh_v2": _one(torch.sinh), "cosh": _one(torch.cosh), "cosh_v2": _one(torch.cosh),
    "sin": _one(torch.sin), "cos": _one(torch.cos), "tan": _one(torch.tan), "tan_v2": _one(torch.tan),
    "atan": _one(torch.atan), "asin": _one(torch.asin), "acos": _one(torch.acos), "acos_v2": _one(torch.acos),
    "erf": _one(torch.erf), "erfc": _one(torch.erfc), "floor": _one(torch.floor), "ceil": _one(torch.ceil),
    "ceil_v2": _one(torch.ceil), "trunc_v2": _one(torch.trunc), "round": _one(torch.round), "neg": _one(torch.neg),
    "sign": _one(torch.sign), "reciprocal": _one(torch.reciprocal), "square": _one(torch.square),
    "square_v2": _one(torch.square), "log1p_v2": _one(torch.log1p), "log1p": _one(torch.log1p),
    "expm1": _one(torch.expm1), "softplus": _one(F.softplus), "mish": _one(F.mish), "softsign": _one(F.softsign),
    "hardsigmoid": _one(F.hardsigmoid), "hardswish": _one(F.hardswish), "selu": _one(F.selu),
    "logsigmoid_v2": _one(F.logsigmoid), "squared_relu": _one(lambda x: torch.relu(x) ** 2),
    "lerp": lambda x, y, w, **a: torch.lerp(x, y, w),
    "addcmul": lambda x, t1, t2, value=1.0, **a: x + value * t1 * t2,
    "addcdiv": lambda x, t1, t2, value=1.0, **a: x + value * t1 / t2,
    "leaky_relu": lambda x, negative_slope=0.01, **a: F.leaky_relu(x, negative_slope),
    "softmax": lambda x, **a: torch.softmax(x, -1),
    # ops-nn activations (attrs as their OpDefs declare them)
    "hard_sigmoid_v2": _one(F.hardsigmoid), "hard_swish_v2": _one(F.hardswish),
    "celu_v3": lambda x, alpha=1.0, **a: F.celu(x, alpha), "softshrink": lambda x, lambd=0.5, **a: F.softshrink(x, lambd),
    "swish": lambda x, scale=1.0, **a: x * torch.sigmoid(scale * x),
    "swish_v2": lambda x, scale=1.0, **a: x * torch.sigmoid(scale * x),
    "glu": lambda x, dim=-1, **a: F.glu(x, dim),
    "elu": lambda x, alpha=1.0, scale=1.0, input_scale=1.0, **a: torch.ops.aten.elu(x, alpha, scale, input_scale),
    "relu6": _one(F.relu6), "relu6_d": _one(F.relu6), "hard_shrink": lambda x, lambd=0.5, **a: F.hardshrink(x, lambd),
    "hard_sigmoid": lambda x, alpha=1 / 6, beta=0.5, **a: (alpha * x + beta).clamp(0, 1),
    "hard_swish": _one(F.hardswish), "log_sigmoid": _one(F.logsigmoid), "erfinv": _one(torch.erfinv),
    "fast_gelu": _one(lambda x: x * torch.sigmoid(1.702 * x)), "fast_gelu_v2": _one(lambda x: x * torch.sigmoid(1.702 * x)),
    "gelu_v2": lambda x, approximate="none", **a: F.gelu(x, approximate=approximate),
    "softplus_v2": lambda x, beta=1.0, threshold=20.0, **a: F.softplus(x, beta, threshold), "bnll": _one(F.softplus),
    "leakyrelu_v2": lambda x, negativeSlope=0.0, **a: F.leaky_relu(x, negativeSlope),
    "tanh_grad": lambda y, dy, **a: dy * (1 - y * y), "relu_grad": lambda g, f, **a: g * (f > 0),
    "silu_grad": lambda dy, x, **a: dy * torch.sigmoid(x) * (1 + x * (1 - torch.sigmoid(x))),
    "softsign_grad": lambda g, f, **a: g / (1 + f.abs()) ** 2,
    "silu_mul": lambda x, y, **a: F.silu(x) * y,
    # ops-nn experimental activations and their grads, inputs in OpDef order as each README states the formula
    "relu_v2": _one(torch.relu), "relu_v3": _one(torch.relu), "soft_plus_v2": _one(F.softplus),
    "celu_v2": lambda x, alpha=1.0, **a: F.celu(x, alpha),
    "elu_v2": lambda x, alpha=1.0, scale=1.0, inputScale=1.0, **a: torch.ops.aten.elu(x, alpha, scale, inputScale),
    "log_softmax_v2": lambda x, axes=(-1,), **a: torch.log_softmax(x, axes[0]),
    "sigmoid_grad": lambda s, dy, **a: dy * s * (1 - s),          # x = sigmoid(input), y = grad_output
    "selu_grad": lambda g, o, **a: torch.where(o >= 0, g * 1.0507009873554805,
                                               g * (o + 1.0507009873554805 * 1.6732632423543772)),
    "softshrink_grad": lambda g, x, lambd=0.5, **a: g * (x.abs() > lambd),
    "hard_shrink_grad": lambda g, x, lambd=0.5, **a: g * (x.abs() > lambd),
    # norms: gamma over the last axis (PARAMS_LAST below)
    "rms_norm": lambda x, g, epsilon=1e-6, **a: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + epsilon) * g,
    "gemma_rms_norm": lambda x, g, epsilon=1e-6, **a: (
        x * torch.rsqrt((x * x).mean(-1, keepdim=True) + epsilon) * (1 + g)),
    "add_rms_norm": lambda x1, x2, g, epsilon=1e-6, **a: (
        (x1 + x2) * torch.rsqrt(((x1 + x2) ** 2).mean(-1, keepdim=True) + epsilon) * g),
    "swi_glu": lambda x, dim=-1, **a: F.silu(x.chunk(2, dim)[0]) * x.chunk(2, dim)[1],
}
# ops-nn foreach ops (tensor-list inputs, ParamType DYNAMIC): per IR input a list of tensors or, for a REQUIRED
# "scalar"/"scalars"/"alpha"/"weight" input, one tensor of shape (1,) / (list length,). The reference maps over
# the lists; s[i] is the scalar for tensor i (a scalar list), s[0] the one scalar otherwise.
def _each(f):
    return lambda xs, **a: [f(x) for x in xs]


def _with_scalar(f):
    return lambda xs, s, **a: [f(x, s[i] if s.numel() == len(xs) else s[0]) for i, x in enumerate(xs)]


def _lists(f):
    return lambda *ls, **a: [f(*xs) for xs in zip(*ls)]


_UNARY = {"abs": torch.abs, "acos": torch.acos, "asin": torch.asin, "atan": torch.atan, "cos": torch.cos,
          "cosh": torch.cosh, "erf": torch.erf, "erfc": torch.erfc, "exp": torch.exp, "expm1": torch.expm1,
          "log": torch.log, "log10": torch.log10, "log1p": torch.log1p, "log2": torch.log2, "neg": torch.neg,
          "reciprocal": torch.reciprocal, "sigmoid": torch.sigmoid, "sign": torch.sign, "sin": torch.sin,
          "sinh": torch.sinh, "sqrt": torch.sqrt, "tan": torch.tan, "tanh": torch.tanh, "copy": lambda x: x.clone()}
_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
           "minimum": torch.minimum, "pow": torch.pow}
FOREACH = {f"foreach_{k}": _each(f) for k, f in _UNARY.items()}
FOREACH |= {f"foreach_{k}_scalar": _with_scalar(f) for k, f in _BINARY.items()}
FOREACH |= {f"foreach_{k}_scalar_list": _with_scalar(f) for k, f in _BINARY.items()}
FOREACH |= {f"foreach_{k}_list": _lists(f) for k, f in _BINARY.items() if k not in ("add", "sub")}
FOREACH |= {
    "foreach_add_list": lambda x1, x2, alpha, **a: [p + alpha[0] * q for p, q in zip(x1, x2)],
    "foreach_sub_list": lambda x1, x2, alpha, **a: [p - alpha[0] * q for p, q in zip(x1, x2)],
    "foreach_lerp_scalar": lambda x1, x2, w, **a: [torch.lerp(p, q, w[0]) for p, q in zip(x1, x2)],
    "foreach_lerp_list": _lists(torch.lerp),
    "foreach_pow_scalar_and_tensor": lambda s, xs, **a: [torch.pow(s[0], x) for x in xs],
}
for _k, _op in (("addcmul", torch.mul), ("addcdiv", torch.div)):
    FOREACH[f"foreach_{_k}_scalar"] = lambda x1, x2, x3, s, _op=_op, **a: [
        p + s[0] * _op(q, r) for p, q, r in zip(x1, x2, x3)]
    FOREACH[f"foreach_{_k}_list"] = FOREACH[f"foreach_{_k}_scalar_list"] = lambda x1, x2, x3, s, _op=_op, **a: [
        p + s[i] * _op(q, r) for i, (p, q, r) in enumerate(zip(x1, x2, x3))]
REFERENCES |= FOREACH
# positive inputs (domain), per op: which IR inputs (all when None)
FOREACH_POSITIVE = {"foreach_log": None, "foreach_log10": None, "foreach_log1p": None, "foreach_log2": None,
                    "foreach_sqrt": None, "foreach_reciprocal": None, "foreach_div_list": {1},
                    "foreach_div_scalar": {1}, "foreach_div_scalar_list": {1}, "foreach_addcdiv_scalar": {2},
                    "foreach_addcdiv_list": {2}, "foreach_addcdiv_scalar_list": {2}, "foreach_pow_list": {0},
                    "foreach_pow_scalar": {0}, "foreach_pow_scalar_list": {0}, "foreach_pow_scalar_and_tensor": {0}}
LIST_SHAPES = ((8, 2048), (3, 77), (2, 5))      # one list: an aligned tensor and two ragged ones, one rank


def foreach_inputs(op, name: str, col: dict) -> list | None:
    """Inputs per IR input for a tensor-list op in this dtype column, or None (a non-floating column)."""
    g = torch.Generator().manual_seed(0)
    pos = FOREACH_POSITIVE.get(name, set())
    out = []
    for i, (p, dyn) in enumerate(zip(op.info["inputs"], op.dynamic())):
        dname = FLOATS.get(col.get(p["name"]))
        if dname is None:
            return None
        dtype = getattr(torch, dname)
        shapes = LIST_SHAPES if dyn else ((len(LIST_SHAPES),) if p["name"].endswith("s") else (1,),)
        ts = []
        for shape in shapes:
            x = torch.randn(shape, generator=g)
            if pos is None or i in pos:
                x = x.abs() + 0.5
            if name in ("foreach_acos", "foreach_asin"):
                x = x.clamp(-0.9, 0.9)
            ts.append(x.to(dtype))
        out.append(ts if dyn else ts[0])
    return out


def foreach_right(op, name: str, ref, attrs: dict) -> tuple[str, str]:
    done = []
    for col in op.columns():
        xs = foreach_inputs(op, name, col)
        lead = FLOATS.get(col.get(op.input_names[0]))
        if xs is None or lead in done:
            continue
        done.append(lead)
        got = op(xs, attrs)[0]
        up = [[t.double() if t.dtype == torch.float32 else t.float() for t in x] if isinstance(x, list)
              else x.double() if x.dtype == torch.float32 else x.float() for x in xs]
        want = ref(*up, **attrs)
        for k, (gt, wt) in enumerate(zip(got, want)):
            ok, m = ttk.compare(gt, wt, CASE, 0, "stat_rel_err")
            if not ok:
                return "wrong", (f"{lead} tensor {k} {tuple(gt.shape)}: {m.get('reason') or 'MERE %.3g MARE %.3g (T %.3g)' % (m['mere'], m['mare'], m['threshold'])}")
    return ("right", "") if done else ("run failed", "no floating dtype column")


# Not right because of a documented bug in CANN's op (docs/cann.md "What the ops-math run found"), keyed by
# (repository folder name, op folder): (what the run must show, the finding with file:line at ops-math@c4193324).
# Such an op stays "not right" in the rate; the table shows these beside it, and only when the run failed the way the
# finding says (a different failure is not covered by it).
# CANN's own kernel test flow (TTK) gives each output ALIGN_UP(n, 32) + 32 bytes plus 256 sentinel bytes and, on the
# 910B, fails the case when any byte from ALIGN_UP(n, 32) on has changed (hicann/ops-test-kit@202675b6
# ttk/core_modules/runtime/rts_interface.py: get_npu_aligned_size, get_oob_check_offset_bytes, OOB_BYTES = 256;
# the kernel-mode instance's _check_output_out_of_bounds), so a whole-unit write past the tensor fails there too.
_GM_TAIL = "the tiling splits the data in {0}-byte units and the last core moves a whole unit, past the end of an " \
           "aclrtMalloc'd tensor (ALIGN_UP(n, 32) + 32 bytes), into what TTK's out-of-bounds check watches: {1}"
CANN_BUGS = {
    ("ops-math", "experimental/math/log"): (r"^wrong", "computes -ln(x) for the default base -1: the tiling stores "
                                            "base -1.0 as the multiplier (op_host/log_tiling.cpp:126-127), the kernel "
                                            "multiplies ln by it (op_kernel/log.h:137,146)"),
    ("ops-math", "experimental/math/cosh"): (r"invalid dtype: 27", "the OpDef lists DT_BF16 (op_host/cosh_def.cpp:34,42), "
                                             "the TilingFunc accepts float and float16 only (op_host/cosh_tiling.cpp:74)"),
    ("ops-math", "experimental/math/addcmul"): (r"\[ub-capacity\]", "a tensor value (tiling key 1): the tiling budgets 4 "
                                                "tiles (op_host/addcmul_tiling.cpp:52-54), the kernel allocates 5 "
                                                "double-buffered queues and 2 float buffers (op_kernel/addcmul.h:179-185)"),
    ("ops-math", "experimental/math/addcdiv"): (r"\[ub-capacity\]", "as Addcmul: 4 tiles budgeted "
                                                "(op_host/addcdiv_tiling.cpp:51-53), 5 queues + 2 float buffers "
                                                "allocated (op_kernel/addcdiv.h:173-185)"),
    ("ops-math", "experimental/math/log_add_exp"): (r"\[ub-capacity\]", "float32: the tiling counts 2 temporary "
                                                    "buffers (op_host/log_add_exp_tiling.cpp:41,159-161), the kernel "
                                                    "allocates 3 (op_kernel/log_add_exp.h:126-128)"),
    ("ops-math", "experimental/math/maximum_v2"): (r"\[ub-capacity\]", "the tiling splits UB for 3 double-buffered "
                                                   "queues (op_host/maximum_v2_tiling.cpp:141-145), the kernel also "
                                                   "allocates 2 temporary tiles (op_kernel/maximum_v2.h:93-97)"),
    ("ops-math", "experimental/math/atan"): (
        r"\[gm-bounds\]|Cast at \S*atan\.h:204\b.*: RoundMode CAST_NONE is not supported for Cast float -> bfloat16_t",
        _GM_TAIL.format(256, "op_host/atan_tiling.cpp:25,138; op_kernel/atan.h:109,116") + "; and bfloat16 casts "
        "its float result back with CAST_NONE (op_kernel/atan.h:176,204), which A2 does not issue for float -> "
        "bfloat16_t (asc-devkit@82b89a15 impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h:590-594: no "
        "conversion, only a debug assert), so the output is never written"),
    ("ops-math", "experimental/math/erf"): (r"\[gm-bounds\]", _GM_TAIL.format(256, "op_host/erf_tiling.cpp:207-210; "
                                                                         "op_kernel/erf.h:224,269")),
    ("ops-math", "experimental/math/floor"): (r"\[gm-bounds\]", _GM_TAIL.format(512, "op_host/floor_tiling.cpp:26,91; "
                                                                           "op_kernel/floor.h:95,126")),
    ("ops-math", "experimental/math/pow"): (r"\[gm-bounds\]", _GM_TAIL.format(256, "op_host/pow_tiling.cpp:25,112; "
                                                                         "op_kernel/pow.h:128-129")),
    ("ops-math", "experimental/math/asinh"): (r"CompareScalar", "CompareScalar over a count that is not a 256-byte "
                                              "multiple (op_kernel/asinh.h:152); asc-devkit Compares.md:100: elements "
                                              "past the last whole 256-byte block are not compared"),
    ("ops-math", "experimental/math/sinh"): (r"^wrong", "float16 computed in half as e^x - 1/e^x (op_kernel/sinh.h:"
                                             "112-118): cancellation near 0 (MARE ~1.8, TTK bound 10 x 2^-10)"),
    ("ops-math", "experimental/math/atanh"): (r"^wrong", "float16 computed in half as 0.5 ln((1+x)/(1-x)) "
                                              "(op_kernel/atanh.h:147-152): ln near 1 loses the small x (MARE ~0.8)"),
    # ops-nn@e5c3fa93
    ("ops-nn", "examples/add_example"): (r"\[gm-bounds\]", "the block's remaining length is taken from "
                                         "blockFactor * (GetBlockIdx() - 1), one block too early "
                                         "(op_kernel/add_example.h:59): the last block copies a whole blockFactor "
                                         "past the tensor"),
    ("ops-nn", "experimental/activation/relu_grad"): (
        # MARE 1: every element's relative error is 1, the all-0 output (not just a worst element that is 0)
        r"\[gm-bounds\]|^wrong: bfloat16 \((8, 2048|3, 77)\): MERE \S+ MARE 1 \(T \S+\); worst element \d+ is 0, "
        r"reference",
        _GM_TAIL.format(256, "op_host/relu_grad_tiling.cpp:29,103; op_kernel/relu_grad.h:117") + "; and bfloat16 is 0 "
        "everywhere: its mask scale factors 2^38 and 2^44 are `constexpr int` (op_kernel/relu_grad.h:30-31), which "
        "wraps both to 0 (modulo 2^32, C++20 [conv.integral]; g++ -Woverflow), so the features' mask is multiplied by 0 (:166-172)"),
    ("ops-nn", "foreach/foreach_add_scalar_list"): (r"^wrong: float16", "float16: the float scalar is converted to half "
                                                    "before the add (foreach_utils/op_kernel/foreach_one_scalar_list_"
                                                    "binary.h:44-46,76-78, T(...) for half; bf16 keeps float): the "
                                                    "result is plain half arithmetic, 0 where x is within half's "
                                                    "rounding of -s (MARE ~1; torch computes in float)"),
    ("ops-nn", "foreach/foreach_sub_scalar_list"): (r"^wrong: float16", "as ForeachAddScalarList "
                                                    "(foreach_one_scalar_list_binary_level_zero_api.h): the kernel's "
                                                    "output equals x - half(s) in half arithmetic everywhere"),
    ("ops-nn", "experimental/activation/hard_swish_v2"): (
        r"TBuf used before TPipe::InitBuffer|^wrong: bfloat16 \((8, 2048|3, 77)\): .*; worst element \d+ is 3, ",
        "bfloat16: Duplicate(tmp0, 6.0) (op_kernel/hard_swish_v2.h:134) overwrites x, which tmp0 holds (:124), "
        "before the Mul meant to take x (:138, `// use the original x`): the output is relu6(x + 3), 3 at x ~ 0; "
        "float16: Init "
                                                          "gives a half input only tmpBuf0, sized tileDataNum * "
                                                          "sizeof(half) (op_kernel/hard_swish_v2.h:90-96), but "
                                                          "Compute sends half down the bf16 path, which takes "
                                                          "tmpBuf0 and tmpBuf1 as float (:118-121): tmpBuf1 was "
                                                          "never given UB, tmpBuf0 holds half the floats"),
    ("ops-nn", "experimental/activation/logsigmoid_v2"): (r"^wrong: float16", "float16 computed in half as "
                                                          "-ln(1 + exp(-x)) (op_kernel/logsigmoid_v2.h:107-119): 1 + "
                                                          "exp(-x) rounds to half's 2^-10 spacing near 1, so ln of it "
                                                          "loses the small exp(-x) for x > ~3 (MARE ~0.014)"),
    ("ops-nn", "experimental/activation/selu"): (r"^wrong: float16", "float16 computed in half (TilingKey 1, "
                                                 "op_kernel/selu.h:233-251): exp(x) - 1 in half cancels near 0 "
                                                 "(MARE ~0.9); the float32 and bf16 paths compute in float"),
    ("ops-nn", "experimental/foreach/foreach_div_scalar"): (r"vs golden", "its InferShape sets only the first "
                                                            "output of the list, y[0] = x[0] (op_host/foreach_div_"
                                                            "scalar_infershape.cpp:35-44): the other outputs' shapes "
                                                            "are never inferred (the op has no aclnn layer to give them)"),
    ("ops-nn", "norm/rms_norm"): (r"(Brcb|BroadCast) at \S*rms_norm_merge_n\.h:(335|278)\b.*: (src|srcLocal) is used after FreeTensor",
                                  "the merge-N path reads rstdLocal (Brcb, op_kernel/rms_norm_merge_n.h:272 -> "
                                  ":333-335, isPerformance 1; BroadCast, :278, isPerformance 0) after CopyOutRstd has "
                                  "dequeued and freed it (:267-268 -> :314-320): a queue-protocol violation; on the "
                                  "device the buffer is not reallocated before the read, so the output is likely "
                                  "unaffected"),
    ("ops-nn", "foreach/foreach_sub_list"): (r"^wrong: float16", "float16 computed in half: alpha * x2 then x1 - "
                                             "it, each rounded to half (op_kernel/foreach_sub_list.cpp:60-61 "
                                             "SubListNormalAdapter<half>): cancellation where x1 ~ alpha x2"),
    ("ops-nn", "foreach/foreach_addcdiv_list"): (r"^wrong: float16", "float16 computed in half: x2 / x3, then Axpy "
                                                 "onto x1, each rounded to half (op_kernel/foreach_addcdiv_list.cpp:"
                                                 "59-60; foreach_utils/op_kernel/foreach_one_scalar_quaternary.h:"
                                                 "32-43 computes T = P = half directly, only bf16 goes to float)"),
    ("ops-nn", "foreach/foreach_addcdiv_scalar_list"): (r"^wrong: float16", "as ForeachAddcdivList "
                                                        "(op_kernel/foreach_addcdiv_scalar_list.cpp:55-56)"),
    ("ops-nn", "foreach/foreach_addcmul_list"): (r"^wrong: float16", "as ForeachAddcdivList with a product "
                                                 "(op_kernel/foreach_addcmul_list.cpp:67-68)"),
    ("ops-nn", "foreach/foreach_expm1"): (r"^wrong: float16", "float16 computed in half as exp(x) - 1 in place "
                                          "(op_kernel/foreach_expm1.cpp:26-33, 42-43; foreach_utils/op_kernel/"
                                          "foreach_implict_output.h:34): cancellation near 0"),
    ("ops-nn", "experimental/activation/elu_v2"): (
        # float32 (3, 77) only: 231 floats, 960 bytes allocated; a float16 / bf16 or other-site overrun is not this
        r"\[gm-bounds\] DataCopy at \S*elu_v2\.h:(95|103)\b.*: byte 960 is past the end of the GM buffer\b.*\(960 bytes\)",
        _GM_TAIL.format(
        256, "op_host/elu_v2_tiling.cpp:25,137,147,156; op_kernel/elu_v2.h:95,103,144-145 (float32: 231 floats "
        "-> 256 moved, 1024 bytes of a 960-byte allocation; float16 / bf16 moves 512 bytes, exactly its 512)")),
    ("ops-nn", "experimental/activation/log_softmax_v2"): (r"\[gm-bounds\] DataCopy at \S*log_softmax_v2\.h:2(06|13)\b.*\(960 bytes\); the access covers bytes \[616, 1000\)",
                                                           "float32, last axis n not a multiple of 32: each row is "
                                                           "read as align_to(n, 32) floats (op_kernel/log_softmax_"
                                                           "v2.h:206,213), so the last row reads past the input's "
                                                           "aclrtMalloc extent ((3, 77): bytes [616, 1000) of 960); "
                                                           "the extra floats are never used (reductions masked to n, "
                                                           ":84-91, :221-245) and TTK / torch_npu allocate more, so "
                                                           "the device's output is likely right: the rule keeps it out"),
    ("ops-nn", "experimental/activation/hard_shrink_grad"): (r"\[ub-capacity\] \S+ at \S*hard_shrink_grad\.h:278\b.*x 1024 bytes brings UB use to 196864 bytes",
                                                             "float16 / bf16, single-buffered (<= 1024 elements): "
                                                             "the tiling reserves 256 bytes for the compare mask "
                                                             "and fills the rest at 30 bytes an element "
                                                             "(op_host/hard_shrink_grad_tiling.cpp:182,188-198: "
                                                             "ubFactor 6528), the kernel sizes the mask "
                                                             "ceil(ubFactor / 8) rounded up to 256 = 1024 bytes "
                                                             "(op_kernel/hard_shrink_grad.h:263-278): 195840 + 1024 "
                                                             "= 196864 bytes, past the 196608-byte UB"),
    ("ops-nn", "experimental/activation/celu_v2"): (
        r"^wrong: float16 (\(8, 2048\): MERE 0\.000522 MARE 0\.88 \(T 0\.000977\); worst element 4886 is -0\.000488281,"
        r"|\(3, 77\): MERE 0\.000492 MARE 0\.0679 \(T 0\.000977\); worst element 227 is -0\.00341797,)",
        "float16 computed in half: exp(x / alpha) - 1 "
                                                    "(op_kernel/celu_v2.h:120-130, T = half): cancellation near 0; "
                                                    "the half steps in torch (scripts/cann_half_steps.py) give the "
                                                    "emulator's MARE 0.88 and worst value exactly"),
    ("ops-nn", "experimental/activation/soft_plus_v2"): (
        r"^wrong: float16 \(8, 2048\): MERE 0\.000439 MARE 0\.0219 \(T 0\.000977\); worst element 9058 is 0\.012619,"
        # (3, 77), float16 and float32: the 1-element tiles (below), stopped at their first DataCopy
        r"|\[datacopy-length\] DataCopy at \S*soft_plus_v2\.h:83 \(block 0\): count 1 x (2|4) bytes = (2|4) bytes ",
        "float16 computed in half as ln(1 + "
                                                         "exp(x)) (op_kernel/soft_plus_v2.h:94-103): 1 + exp(x) "
                                                         "rounds to half's 2^-10 spacing, so x < ~-3 loses exp(x) "
                                                         "(MARE 0.022; the half steps give it exactly, "
                                                         "scripts/cann_half_steps.py); and in every dtype a shape "
                                                         "whose count is not a multiple of 8 x 16 x 8 is tiled "
                                                         "wrong: the tiling rounds the count up to 8 over a fixed 8 "
                                                         "blocks (op_host/soft_plus_v2_tiling.cpp:36-37,119-121), "
                                                         "the kernel runs 16 tiles of blockLength / 8 / 2 elements "
                                                         "(op_kernel/soft_plus_v2.h:58-60,72-76): (3, 77) -> 29 a "
                                                         "block, tiles of 1, so elements 16..28 of each block are "
                                                         "never written, and each DataCopy moves 1 element, not a "
                                                         "32-byte unit (:83,114)"),
    ("ops-nn", "experimental/activation/selu_grad"): (
        r"^wrong: float16 (\(8, 2048\): MERE 0\.000606 MARE 1 \(T 0\.000977\); worst element 9135 is -0,"
        r"|\(3, 77\): MERE 0\.000369 MARE 0\.014 \(T 0\.000977\); worst element \d+ is 0\.00242043,)",
        "float16 computed in half: the factor "
                                                      "outputs + scale * alpha with scale * alpha rounded to half "
                                                      "(1.7578 for 1.7581) and the sum to half (op_kernel/selu_grad."
                                                      "h:150-155,163-166; selu_grad.cpp:35 SeluGrad<half, half>): "
                                                      "0 where outputs ~ -1.758 (MARE 1; the half steps give it "
                                                      "exactly, scripts/cann_half_steps.py)"),
    ("ops-nn", "experimental/activation/tanh_grad"): (r"CAST_RINT is not supported for Cast (half|bfloat16_t) -> float",
                                                      "float16 and bfloat16: Cast to float with "
                                                      "CAST_RINT (op_kernel/tanh_grad.h:131-132); on the A2 only "
                                                      "CAST_NONE issues either conversion, any other mode converts "
                                                      "nothing (asc-devkit@82b89a15 impl/basic_api/dav_c220/"
                                                      "kernel_operator_vec_vconv_impl.h:132-150 half, :651-669 "
                                                      "bfloat16_t)"),
}


# Entries where CANN's kernel breaks a rule the emulator enforces (a tensor's aclrtMalloc extent, the queue protocol)
# but the device's output is likely right: neither CANN's test flow nor the device would fail. Counted apart from the
# real defects in the summary and the table ("rule only").
RULE_ONLY = {("ops-nn", "norm/rms_norm"), ("ops-nn", "experimental/activation/log_softmax_v2")}

# computes_right runs every case; the failures after the first follow it in the detail, each after this line
ALSO = "\n[also failing] "


def joined(failures: list[tuple[str, str]]) -> tuple[str, str]:
    """One (result, detail) for several failing cases: a run failure leads (it names the op's result), the rest
    follow as `ALSO` lines, each with its own result."""
    failures = sorted(failures, key=lambda f: f[0] != "run failed")
    return failures[0][0], failures[0][1] + "".join(f"{ALSO}{r}: {d}" for r, d in failures[1:])


def cann_bug(repo: str, project: str, result: str, detail: str) -> str:
    """The documented CANN finding that explains this op's failure -- every failing case of it -- or ''."""
    hit = CANN_BUGS.get((repo, project))
    if not hit:
        return ""
    cases = [(result, detail.split(ALSO)[0])] + [tuple(c.split(": ", 1)) for c in detail.split(ALSO)[1:]]
    return hit[1] if all(re.search(hit[0], f"{r}: {d}" if r == "wrong" else d) for r, d in cases) else ""


# attrs the survey sets (an OpDef default that tests nothing: LeakyreluV2's negativeSlope has none, `.Float()`)
ATTRS = {"leakyrelu_v2": {"negativeSlope": 0.01}, "celu_v2": {"alpha": 1.0}}   # celu_v2: `.Float()`, no default
# inputs that are not data: Pows' x2 is the exponent, read as a scalar from x2[0], and its kernel computes only
# the exponents -2, -1, -0.5, 0.5, 2, 3 (ops-math math/pows/op_kernel/pows_base.h:31-42, :126-168; other exponents
# are the aclnn layer's, which calls another op)
FIXED_INPUTS = {"pows": {1: lambda dtype: torch.tensor([2.0], dtype=dtype)}}
# inputs shaped like the last axis of the first (a norm's gamma / beta), by position
PARAMS_LAST = {"rms_norm": {1}, "gemma_rms_norm": {1}, "add_rms_norm": {2}}
POSITIVE = {"log", "sqrt", "rsqrt", "acosh", "xlogy", "reciprocal", "addcdiv", "div", "real_div", "pows", "pow",
            "log1p", "log1p_v2"}
# inputs drawn uniformly from CANN's own test range (its TTK CSV's input_data_ranges) where N(0, 1) data is outside
# what the op means: Lerp's weight is an interpolation weight; with N(0, 1) weights the results near 0 cancel and
# torch's own float32 lerp fails stat_rel_err too (MARE 0.0030 > 10 T), the kernel's start + w (end - start) 0.0013
# (ops-math@c4193324 math/lerp/tests/st/arch35/ttk_kernel_lerp_st.csv: (-1, 1) for start, end and weight)
RANGES = {"lerp": (-1.0, 1.0)}
UNIT = {"asin", "acos", "acos_v2", "atanh", "erfinv"}
SHAPES = ((8, 2048), (3, 77))
# ops whose tiling takes only some ranks (ops-math add_example_tiling.cpp: "shape dim ... should be equal 4")
SHAPES_FOR = {"add_example": ((2, 4, 16, 64), (3, 5, 7, 11)),
              # the split axis must be even (GLU: "can not be split with factor: 2")
              "glu": ((8, 2048), (3, 78)), "swi_glu": ((8, 2048), (3, 78)),
              # "Last dim size should be no more than 1024" and even (ops-nn experimental/activation/silu_mul tiling:98-103)
              "silu_mul": ((8, 1024), (3, 78)),
              # "the last dim of `x` must be multiple of 8" (ops-nn experimental/activation/relu_v3/op_host/relu_v3_tiling.cpp:23)
              "relu_v3": ((8, 2048), (3, 72))}
FLOATS = {0: "float32", 1: "float16", 27: "bfloat16"}
CASE = ttk.Case(name="survey", op_name="", input_shapes=(), input_dtypes=(), output_shapes=None, output_dtypes=())


def dtype_defines(project: layout.Project) -> dict[str, str]:
    """DTYPE_<NAME> from the first DataType entry of each Input/Output in the op_host text: a list written in
    place (`DataType({ge::DT_FLOAT, ...})`) or named (`DataType(xDtype)` with `xDtype = {ge::DT_INT32, ...}`); float
    where neither is found (a list built in code)."""
    out = {}
    for p in project.own_host_sources:
        text = p.read_text(errors="replace")
        for m in re.finditer(r'(?:Input|Output)\s*\(\s*"(\w+)"\s*\)(.*?)(?=(?:Input|Output|Attr)\s*\(|$)', text, re.S):
            dt = re.search(r"DataType(?:List)?\s*\(\s*\{\s*(?:ge::)?(DT_\w+)", m.group(2))
            named = re.search(r"DataType(?:List)?\s*\(\s*(\w+)\s*\)", m.group(2))
            if dt is None and named:   # a named list: a variable or a #define
                dt = re.search(re.escape(named.group(1)) + r"\s*(?:=\s*)?\\?\s*\{\s*(?:ge::)?(DT_\w+)", text)
            if dt and dt.group(1) in GE_CXX:
                out[m.group(1)] = GE_CXX[dt.group(1)]
            elif dt is None:  # a list the op_host computes (foreach scalars): float, as cann_inplace_survey.py does
                out.setdefault(m.group(1), "float")
    return out


_PATHS = re.compile(r"(?:/[\w.+-]+)+/?|\b\d+\b")


def cause(text: str) -> str:
    """A failure message as a cause that groups: g++'s first error reduced to its kind and the name at fault,
    without paths, line numbers or shapes."""
    first = next((ln for ln in text.splitlines() if "error:" in ln or "fatal error" in ln), text.splitlines()[0]
                 if text else "")
    msg = first.split("error:", 1)[-1].strip()
    for pat, fmt in ((r"([\w./]+): No such file or directory", "missing header {0}"),
                     (r"‘([\w:]+)’ was not declared in this scope", "undeclared name {0}"),
                     (r"‘([\w:]+)’ has not been declared", "undeclared name {0}"),
                     (r"‘([\w:]+)’ is not a member of ‘([\w:]+)’", "{1} has no {0}"),
                     (r"no matching function for call to ‘([\w:]+)", "no matching overload of {0}"),
                     (r"has no member named ‘(\w+)’", "no member {0}"),
                     (r"‘([\w:]+)’ does not name a type", "unknown type {0}"),
                     (r"not supported on the emulator: ([\w:]+)", "not supported on the emulator: {0}"),
                     (r"#error (.*)", "#error {0}"),
                     (r"no match for ‘operator", "operator not defined"),
                     (r"invalid conversion", "invalid conversion"),
                     (r"expected", "syntax after macro expansion")):
        m = re.search(pat, msg)
        if m:
            return fmt.format(*m.groups())
    return _PATHS.sub("…", msg)[:100]


def excluded(project: layout.Project, op_type: str, any_chip: bool = False) -> str:
    """Why the op is not an A2 vector kernel (counted apart), or ''. ``any_chip``: an OpDef naming other chips only
    is compiled for the A2 all the same (public projects: contest boards are Ascend 310B, the kernels AscendC)."""
    if not any_chip and project.a2_supported(op_type) is False:
        return "OpDef does not name ascend910b"
    try:
        kernel = project.kernel_file(op_type)
    except OpkitError:
        arch = [p for p in project.op_kernel.glob("arch*/*.cpp")]
        return "kernel only under op_kernel/archNN/" if arch else "no kernel file"
    if kernel.stem.endswith("_apt"):
        return "Ascend 950 entry (*_apt.cpp)"
    text = kernel.read_text(errors="replace")
    if re.search(r"KERNEL_TYPE_(AIC_ONLY|MIX_AIC\w*|MIX_AIV\w*)", text):
        return "cube / mix kernel"
    return ""


def compiles(project: layout.Project, op_type: str, work: Path) -> tuple[bool, str, int]:
    """(compiles, cause, instances tried)."""
    kernel = project.kernel_file(op_type)
    try:
        name, templated = layout.entry(kernel, op_type)
    except OpkitError as e:
        return False, cause(str(e).split(": ", 1)[-1]), 0
    text = view_for(op_type, project.tiling_header(op_type), project.libs.repo or project.root)
    view = None
    if text is not None:
        view = work / "kernel_tiling.h"
        work.mkdir(parents=True, exist_ok=True)
        view.write_text(text)
    exprs = [name]
    if templated:
        try:
            tpl = instances.tables(project, work, kernel)
        except OpkitError as e:
            return False, "template-argument tables: " + cause(str(e).split("\n", 1)[-1]), 0
        if not tpl:
            return False, "templated entry without ASCENDC_TPL_ARGS_DECL", 0
        combos = instances.selected(tpl)
        if not combos:
            return False, "ASCENDC_TPL_SEL selects no instance", 0
        kinds = instances.param_kinds(kernel, name)
        try:
            exprs = [instances.entry_expr(name, tpl, kinds, c) for c in combos]
        except (OpkitError, KeyError) as e:
            return False, f"template argument: {cause(str(e))}", 0
    src = kernel_source(kernel.resolve(), name, view)
    src += "namespace {\n" + "".join(f"auto* const opkit_inst_{i} = &{ENTRY_PREFIX}{e};\n"
                                     for i, e in enumerate(exprs)) + "}\n"
    defs = dtype_defines(project)
    flags = [f"-DDTYPE_{n.upper()}={v}" for n, v in defs.items()]
    # ORIG_DTYPE_<X> is the ge::DataType's name (DT_INT8), as import-cann gives it (cannproject/dtypes.kernel_defines)
    flags += [f"-DORIG_DTYPE_{n.upper()}={CXX_GE[v]}" for n, v in defs.items()]
    cmd = ["g++", "-fsyntax-only", "-w", *emulator.cflags(), f"-DOPKIT_CANN_OP_TYPE={op_type}", *flags,
           f"-I{project.op_kernel}", f"-I{project.root}", *(f"-I{d}" for d in project.libs.kernel_include),
           *(f"-I{d}" for d in libs.staged_siblings(project.root, project.op_kernel, project.libs.repo, work)),
           "-x", "c++", "-"]
    r = subprocess.run(cmd, input=src, capture_output=True, text=True, timeout=600)
    if r.returncode == 0:
        return True, "", len(exprs)
    return False, cause(r.stderr), len(exprs)


def inputs_for(name: str, n: int, shape, dtype) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    xs = []
    for i in range(n):
        x = torch.randn(shape[-1:] if i in PARAMS_LAST.get(name, ()) else shape, generator=g, dtype=torch.float32)
        if name in RANGES:
            lo, hi = RANGES[name]
            x = torch.rand(x.shape, generator=g) * (hi - lo) + lo
        if name in POSITIVE:
            x = x.abs() + 0.5
        if name in UNIT:
            x = x.clamp(-0.9, 0.9)
        if name == "acosh":
            x = x + 1.0
        xs.append(FIXED_INPUTS[name][i](dtype) if i in FIXED_INPUTS.get(name, {}) else x.to(dtype))
    return xs


def reference_of(op_type: str):
    name = layout.cann_snake(op_type).removesuffix("_custom")
    return name, REFERENCES.get(name)


def computes_right(project: layout.Project, op_type: str, work: Path) -> tuple[str, str]:
    name, ref = reference_of(op_type)
    op = None
    try:
        op = CannOp(project, op_type, work, auto_sync=project.a2_auto_sync())   # AUTO_SYNC false: as CANN builds it
        attrs = {a["name"]: a["default"] for a in op.info["attrs"]} | ATTRS.get(name, {})
        if any(op.dynamic()):
            return foreach_right(op, name, ref, attrs)
        done, failures = [], []
        for col in op.columns():
            dname = FLOATS.get(col.get(op.input_names[0]))
            if dname is None or dname in done or any(col.get(n) != col.get(op.input_names[0])
                                                     for n in op.input_names):
                continue
            done.append(dname)
            dtype = getattr(torch, dname)
            for shape in SHAPES_FOR.get(name, SHAPES):
                # every dtype column and shape runs: a documented failure must not hide the cases after it
                try:
                    xs = inputs_for(name, len(op.input_names), shape, dtype)
                    got = op(xs, attrs)[0]
                except OpkitError as e:
                    failures.append(("run failed", str(e)))
                    if "does not compile on the emulator" in str(e):
                        break          # the column's module: the other shape would fail the same way
                    continue
                except Exception as e:  # noqa: BLE001 - an emulator rule or a crash: the survey records it
                    failures.append(("run failed", f"{type(e).__name__}: {e}"))
                    continue
                want = ref(*[x.double() if x.dtype == torch.float32 else x.float() for x in xs], **attrs)
                ok, m = ttk.compare(got, want, CASE, 0, "stat_rel_err")   # CANN's own criterion (ttk.py)
                if not ok:
                    # the worst element as the criterion sees it: relative to the golden (ttk.py stat_rel_err)
                    g = want.to(got.dtype).double()
                    bad = ((got.double() - g).abs() / (g.abs() + 1e-7)).nan_to_num(1e30).reshape(-1).argmax().item()
                    failures.append(("wrong", (
                        f"{dname} {shape}: {m.get('reason') or 'MERE %.3g MARE %.3g (T %.3g)' % (m['mere'], m['mare'], m['threshold'])}; "
                        f"worst element {bad} is {got.reshape(-1)[bad].item():.6g}, "
                        f"reference {want.reshape(-1)[bad].item():.6g}")))
        if not done:
            return "run failed", "no floating dtype column shared by all inputs"
        return joined(failures) if failures else ("right", "")
    except OpkitError as e:
        return "run failed", str(e)
    except Exception as e:  # noqa: BLE001 - an emulator rule or a crash: the survey records it
        return "run failed", f"{type(e).__name__}: {e}"
    finally:
        if op is not None:
            op.close()


def run_cause(detail: str) -> str:
    s = re.sub(r"^op \w+: ", "", detail.splitlines()[0]) if detail else ""
    if "do not compile against" in detail:
        return "op_host does not compile: " + cause("\n".join(detail.splitlines()[1:]))
    if "does not compile on the emulator" in detail:
        return "kernel module does not compile: " + cause("\n".join(detail.splitlines()[1:]))
    if "crashed" in s:
        return "host code crashed"
    s = re.sub(r"\(inputs .*", "", s)
    return _PATHS.sub("…", s)[:100]


def git_commit(d: Path) -> str:
    r = subprocess.run(["git", "-C", str(d), "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout.strip()
    marker = d / ".commit"   # a `git archive` export: the commit written beside it
    return marker.read_text().strip()[:8] if marker.is_file() else "?"


def _templated(project: layout.Project, op_type: str) -> bool:
    try:
        return layout.entry(project.kernel_file(op_type), op_type)[1]
    except OpkitError:
        return True      # no entry: compiles() says why


def _host_stage(result: tuple[str, str]) -> bool:
    """Whether a run stopped before any kernel module was built (op_host, tiling, host crash)."""
    res, detail = result
    return res == "run failed" and not detail.startswith("opkit emulator") and \
        "does not compile on the emulator" not in detail and "EmulatorError" not in detail


def survey(root: Path, opbase: str | None, jobs: int, only: str | None, run: bool, work: Path,
           with_reference: bool = False, any_chip: bool = False) -> list[dict]:
    projects = sorted({p.parent for p in root.rglob("op_host") if p.is_dir() and (p.parent / "op_kernel").is_dir()
                       and not {"tests", "scripts"} & set(p.relative_to(root).parts)})   # scripts/: op templates
    items = []
    for p in projects:
        proj = layout.find(p, opbase=opbase)
        items += [(proj, t) for t in proj.op_types() if (not only or re.search(only, t))
                  and (not with_reference or reference_of(t)[1] is not None)]
    print(f"cann_survey: {root} ({git_commit(root)}): {len(projects)} op folders, {len(items)} ops", flush=True)

    def one(i_item):
        i, (project, op_type) = i_item
        w = work / f"{root.name}_{i}"
        rec = {"repo": root.name, "project": str(project.root.relative_to(root)), "op": op_type}
        rec["excluded"] = excluded(project, op_type, any_chip)
        name, ref = reference_of(op_type)
        rec["reference"] = ref is not None
        if rec["excluded"]:
            line = f"apart: {rec['excluded']}"
        else:
            early = None
            if ref is not None and run and not _templated(project, op_type):
                # skip what cannot differ: a plain entry with a reference is compiled by the run itself (every
                # dtype column's module); the separate syntax check only when the run never reached the kernel
                early = computes_right(project, op_type, w)
            if early is not None and not _host_stage(early):
                built = "does not compile on the emulator" not in early[1]
                ok, why, n = built, "" if built else cause(early[1].split("\n", 1)[-1]), 1
            else:
                try:
                    ok, why, n = compiles(project, op_type, w)
                except Exception as e:  # noqa: BLE001
                    ok, why, n = False, f"{type(e).__name__}: {cause(str(e))}", 0
            rec.update(compiles=ok, compile_error=why, instances=n)
            line = f"compiles ({n} instance{'s' * (n != 1)})" if ok else f"COMPILE: {why}"
            if ref is not None and run:
                if ok:
                    res, detail = early or computes_right(project, op_type, w)
                else:
                    res, detail = "not compiled", why
                rec.update(result=res, detail=detail)
                line += f"; {res}" + (f" ({run_cause(detail) if res == 'run failed' else detail})"
                                      if detail and res != "not compiled" else "")
        shutil.rmtree(w, ignore_errors=True)
        print(f"[{i + 1}/{len(items)}] {rec['project']} {op_type}: {line}", flush=True)
        return rec

    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(one, enumerate(items)))


def summary(root: Path, recs: list[dict]) -> dict:
    a2 = [r for r in recs if not r["excluded"]]
    comp = [r for r in a2 if r.get("compiles")]
    with_ref = [r for r in a2 if r["reference"] and "result" in r]
    right = [r for r in with_ref if r["result"] == "right"]
    documented = [r for r in with_ref if r["result"] != "right" and cann_bug(r["repo"], r["project"], r["result"],
                                                                            r.get("detail", ""))]
    cann = [r for r in documented if (r["repo"], r["project"]) not in RULE_ONLY]
    rule_only = [r for r in documented if (r["repo"], r["project"]) in RULE_ONLY]
    s = {"repo": root.name, "commit": git_commit(root), "ops": len(recs), "a2": len(a2), "compiles": len(comp),
         "with_reference": len(with_ref), "right": len(right), "cann_bug": len(cann), "rule_only": len(rule_only),
         "apart": Counter(r["excluded"] for r in recs if r["excluded"]),
         "compile_causes": Counter(r["compile_error"] for r in a2 if not r.get("compiles")),
         "run_causes": Counter(("not compiled" if r["result"] == "not compiled" else
                                "wrong result" if r["result"] == "wrong" else run_cause(r["detail"]))
                               for r in with_ref if r["result"] != "right")}
    pct = lambda a, b: f"{100 * a / b:.0f}%" if b else "-"  # noqa: E731
    print(f"\n{root.name} @ {s['commit']}: {len(recs)} ops; {len(a2)} A2 vector kernels, compile {len(comp)} "
          f"({pct(len(comp), len(a2))}); with a reference {len(with_ref)}, right {len(right)} "
          f"({pct(len(right), len(with_ref))}); not right because of a documented CANN bug {len(cann)}"
          + (f", and {len(rule_only)} where CANN's kernel breaks a rule only (device likely right)" if rule_only else ""))
    for r in documented:
        print(f"  {'CANN rule only (device likely right)' if r in rule_only else 'CANN bug'}: {r['op']} "
              f"({r['project']}): {cann_bug(r['repo'], r['project'], r['result'], r.get('detail', ''))}")
    for title, key in (("counted apart", "apart"), ("compile failures", "compile_causes"),
                       ("not right", "run_causes")):
        for k, c in s[key].most_common():
            print(f"  {title} x{c}: {k}")
    return s


def table(sums: list[dict]) -> str:
    pct = lambda a, b: f"{100 * a / b:.0f} %" if b else "-"  # noqa: E731
    lines = ["| repository @ commit | ops | A2 vector kernels | compile (every selected instance) | "
             "with a PyTorch reference | right (of those with a reference) | not right because of a documented "
             "CANN bug |", "|---|---|---|---|---|---|---|"]
    for s in sums:
        label = f"{s['repo']} @ {s['commit']}" + (f" (subset: {s['subset']})" if s.get("subset") else "")
        lines.append(f"| {label} | {s['ops']} | {s['a2']} | {s['compiles']} "
                     f"({pct(s['compiles'], s['a2'])}) | {s['with_reference']} | {s['right']} "
                     f"({pct(s['right'], s['with_reference'])}) | {s['cann_bug']}"
                     + (f" + {s['rule_only']} rule only (device likely right)" if s.get("rule_only") else "") + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--opbase", default=None, help="hicann/opbase checkout (else OPKIT_CANN_OPBASE or a sibling)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--table", default=None, help="write the per-repository markdown table here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=None, help="only op types matching this regex")
    ap.add_argument("--no-run", action="store_true", help="compile only; no reference runs")
    ap.add_argument("--with-reference", action="store_true",
                    help="only ops with a PyTorch reference (the table then says it is that subset)")
    ap.add_argument("--any-chip", action="store_true",
                    help="public projects: compile an op whose OpDef names other chips only (contest boards are "
                         "Ascend 310B) for the A2 all the same, instead of counting it apart")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="opkit-cann-survey-"))
    try:
        recs, sums = [], []
        for d in args.dirs:
            root = d.resolve()
            r = survey(root, args.opbase, args.jobs, args.only, not args.no_run, work, args.with_reference,
                       args.any_chip)
            recs += r
            sums.append(summary(root, r))
            if args.only or args.with_reference:   # a subset is never shown as the repository's figure
                sums[-1]["subset"] = ", ".join(filter(None, [args.with_reference and "ops with a reference",
                                                             args.only and f"--only {args.only}"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(recs, indent=1, ensure_ascii=False))
    if args.table:
        Path(args.table).write_text(table(sums))
    print("\n" + table(sums))
    return 0


if __name__ == "__main__":
    sys.exit(main())
