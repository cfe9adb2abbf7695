"""``tbe.dsl`` on the CPU: the elementwise, compare/select, cast, broadcast, rounding and reduce APIs.

Rules kept from the device (docs/tbe.md, with sources): one node per call in its operands' dtype, rounded
to it; binary ops need identical shapes and dtypes (no implicit broadcast); the per-SoC dtype table
(E90003 otherwise); scalars rounded to the tensor's dtype; ``broadcast(float)`` is float16; float->int
casts truncate; vrec/vrsqrt are estimates unless Newton steps are asked for; sums run in the input
dtype, in a pairwise (halving) order.
"""
from __future__ import annotations

from typing import Sequence

import torch

from . import platform as P
from .graph import DTYPES, FLOATS, Const, IntImm, Tensor, TbeError, compute_dtype, state

# -- helpers ---------------------------------------------------------------------------------------


def _tensor(api: str, x, what: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TbeError(f"tbe.dsl.{api}: {what} must be a tensor, got {type(x).__name__} {x!r}")
    return x


def _same(api: str, a: Tensor, b: Tensor) -> None:
    if a._shape != b._shape:
        raise TbeError(f"tbe.dsl.{api}: operand shapes differ, {list(a._shape)} vs {list(b._shape)}; the DSL "
                       "does no implicit broadcast: call tbe.dsl.broadcast(tensor, shape) first")
    if a.dtype != b.dtype:
        raise TbeError(f"tbe.dsl.{api}: operand dtypes differ, {a.dtype} vs {b.dtype}; call tbe.dsl.cast_to first")


def _scalar(x, dtype: str) -> float | int:
    """A scalar operand becomes ``tvm.const(x).astype(tensor dtype)``: rounded to that dtype."""
    v = x.value if isinstance(x, Const) else getattr(x, "value", x)
    if isinstance(v, Tensor):
        raise TbeError(f"expected a scalar, got tensor {v.name}")
    return torch.tensor(float(v), dtype=torch.float64).to(DTYPES[dtype]).item()


def _node(api: str, like: Tensor, fn, args: Sequence, dtype: str | None = None, shape=None) -> Tensor:
    return Tensor(like._shape if shape is None else shape, dtype or like.dtype, f"tbe.dsl.{api}", fn, args)


def _unary(api: str, op):
    def f(raw_tensor, *a, **k):
        x = _tensor(api, raw_tensor)
        P.require(api, x.dtype)
        return _node(api, x, op, [x])
    f.__name__ = api
    return f


def _binary(api: str, op):
    def f(lhs, rhs):
        a, b = _tensor(api, lhs, "lhs"), _tensor(api, rhs, "rhs")
        _same(api, a, b)
        P.require(api, a.dtype)
        return _node(api, a, op, [a, b])
    f.__name__ = api
    return f


def _with_scalar(api: str, op):
    def f(raw_tensor, scalar):
        x = _tensor(api, raw_tensor)
        P.require(api, x.dtype)
        s = _scalar(scalar, x.dtype)
        return _node(api, x, lambda t: op(t, torch.tensor(s, dtype=t.dtype)), [x])
    f.__name__ = api
    return f


# -- elementwise -----------------------------------------------------------------------------------

vadd = _binary("vadd", torch.add)
vsub = _binary("vsub", torch.sub)
vmul = _binary("vmul", torch.mul)
vmax = _binary("vmax", torch.maximum)
vmin = _binary("vmin", torch.minimum)
vand = _binary("vand", torch.bitwise_and)
vor = _binary("vor", torch.bitwise_or)
vadds = _with_scalar("vadds", torch.add)
vmuls = _with_scalar("vmuls", torch.mul)
vmaxs = _with_scalar("vmaxs", torch.maximum)
vmins = _with_scalar("vmins", torch.minimum)
vexp = _unary("vexp", torch.exp)
vabs = _unary("vabs", torch.abs)
vnot = _unary("vnot", torch.bitwise_not)
vrelu = _unary("vrelu", lambda t: torch.clamp_min(t, 0))
vlog = _unary("vlog", torch.log)

_EST_BITS = {"float16": 10, "float32": 13, "bfloat16": 7}


def _estimate(t: torch.Tensor, f) -> torch.Tensor:
    """A hardware reciprocal(-sqrt) estimate: f(t) with the mantissa cut toward zero to a few bits, so
    the relative error stays under 2^-10 (fp16) / 2^-13 (fp32), the 0.1% / 0.01% CANN's TIK pages state
    for vec_rec. The real tables are unpublished: not bit-exact (docs/tbe.md)."""
    exact = f(t.double())
    bits = _EST_BITS.get(str(t.dtype).replace("torch.", ""), 13)
    m, e = torch.frexp(exact)
    cut = torch.ldexp(torch.floor(m * 2.0 ** (bits + 1)) / 2.0 ** (bits + 1), e.double())
    return torch.where(torch.isfinite(exact), cut, exact).to(t.dtype)


def _newton_steps() -> int:
    return 1 if state.soc == "Ascend310" else 2


def vrec(raw_tensor, impl_mode="high_performance", priority_flag=None):
    """Estimate; high_precision adds Newton steps x <- x*(2 - a*x), each node rounded (two; one on 310)."""
    x = _tensor("vrec", raw_tensor)
    P.require("vrec", x.dtype)
    r = _node("vrec", x, lambda t: _estimate(t, torch.reciprocal), [x])
    if impl_mode == "high_precision" or priority_flag == 1:
        for _ in range(_newton_steps()):
            r = vmul(r, vadds(vmuls(vmul(x, r), -1.0), 2.0))
    return r


def vrsqrt(raw_tensor, impl_mode="high_performance"):
    """Estimate; high_precision adds one Newton step x <- x*(1.5 - 0.5*a*x*x) (UNCERTAIN: docs/tbe.md)."""
    x = _tensor("vrsqrt", raw_tensor)
    P.require("vrsqrt", x.dtype)
    r = _node("vrsqrt", x, lambda t: _estimate(t, torch.rsqrt), [x])
    if impl_mode == "high_precision":
        r = vmul(r, vadds(vmuls(vmul(vmul(x, r), r), -0.5), 1.5))
    return r


def vsqrt(raw_tensor, impl_mode="high_performance"):
    x = _tensor("vsqrt", raw_tensor)
    P.require("vsqrt", x.dtype)
    if state.soc == "Ascend310":      # no native sqrt there: 1 / rsqrt (docs/tbe.md)
        return vrec(vrsqrt(x), "high_precision")
    return _node("vsqrt", x, torch.sqrt, [x])


def vdiv(lhs, rhs):
    a, b = _tensor("vdiv", lhs, "lhs"), _tensor("vdiv", rhs, "rhs")
    _same("vdiv", a, b)
    P.require("vdiv", a.dtype)
    if state.soc == "Ascend310":      # "mini" divides through the reciprocal
        return vmul(a, vrec(b, "high_precision"))
    return _node("vdiv", a, torch.div, [a, b])


def vmod(lhs, rhs):
    a, b = _tensor("vmod", lhs), _tensor("vmod", rhs)
    _same("vmod", a, b)
    P.require("vmod", a.dtype)
    q = floor(vdiv(a, b), a.dtype)
    return vsub(a, vmul(q, b))


def vlrelu(raw_tensor, alpha=0):
    x = _tensor("vlrelu", raw_tensor)
    P.require("vlrelu", x.dtype)
    s = _scalar(alpha, x.dtype)
    return _node("vlrelu", x, lambda t: torch.where(t >= 0, t, t * torch.tensor(s, dtype=t.dtype)), [x])


def vaxpy(lhs, rhs, scalar):
    return vadd(vmuls(lhs, scalar), rhs)


def vmla(x, y, z):
    return vadd(vmul(x, y), z)


def vmadd(x, y, z):
    return vadd(vmul(x, z), y)


def clip(data, max_value, min_value):
    x = _tensor("clip", data)
    P.require("clip", x.dtype)
    return vmins(vmaxs(x, min_value), max_value)


# -- compare / select ------------------------------------------------------------------------------

_CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "gt": torch.gt, "ge": torch.ge, "le": torch.le}


def _cmp_operands(api: str, lhs, rhs):
    a = _tensor(api, lhs, "lhs")
    if not P.supports("vcmp", a.dtype):   # static vcmp auto-casts instead of failing (docs/tbe.md)
        a = cast_to(a, "float16")
    if isinstance(rhs, Tensor):
        b = rhs if rhs.dtype == a.dtype else cast_to(rhs, a.dtype)
        _same(api, a, b)
        return a, b, None
    return a, None, _scalar(rhs, a.dtype)


def vcmp(lhs, rhs, operation="lt", mode="bool"):
    if operation not in _CMP:
        raise TbeError(f"tbe.dsl.vcmp: operation {operation!r} is not one of {', '.join(_CMP)}")
    if mode not in ("bool", "bit"):
        raise TbeError(f"tbe.dsl.vcmp: mode {mode!r} is not 'bool' or 'bit'")
    a, b, s = _cmp_operands("vcmp", lhs, rhs)
    if mode == "bit" and a._shape[-1] % 8:
        raise TbeError(f"tbe.dsl.vcmp: bit mode needs the last dim to be a multiple of 8, got {list(a._shape)}")
    op = _CMP[operation]
    if b is not None:
        return _node("vcmp", a, op, [a, b], dtype="bool")
    return _node("vcmp", a, lambda t: op(t, torch.tensor(s, dtype=t.dtype)), [a], dtype="bool")


def vsel(condition, lhs, rhs):
    c = _tensor("vsel", condition, "condition")
    ref = lhs if isinstance(lhs, Tensor) else rhs if isinstance(rhs, Tensor) else None
    dtype = ref.dtype if ref is not None else "float16"
    args, parts = [c], []        # parts: ("t", index into the evaluated args) or ("s", scalar)
    for side in (lhs, rhs):
        if isinstance(side, Tensor):
            if side._shape != c._shape:
                raise TbeError(f"tbe.dsl.vsel: operand shape {list(side._shape)} differs from the condition's "
                               f"{list(c._shape)}")
            if side.dtype != dtype:
                raise TbeError(f"tbe.dsl.vsel: operand dtypes differ ({side.dtype} vs {dtype})")
            parts.append(("t", len(args)))
            args.append(side)
        else:
            parts.append(("s", _scalar(side, dtype)))

    def fn(*vals):
        a, b = (vals[v] if k == "t" else torch.tensor(v, dtype=DTYPES[dtype]) for k, v in parts)
        return torch.where(vals[0].bool(), a, b)
    return _node("vsel", c, fn, args, dtype=dtype)


def vcmpsel(lhs, rhs=None, operation="lt", slhs=None, srhs=None):
    if rhs is None or slhs is None or srhs is None:
        raise TbeError("tbe.dsl.vcmpsel: opkit's emulation needs rhs, slhs and srhs given explicitly "
                       "(their defaults are not established; docs/tbe.md)")
    return vsel(vcmp(lhs, rhs, operation), slhs, srhs)


# -- cast, broadcast, rounding --------------------------------------------------------------------

def _to(t: torch.Tensor, dst: str) -> torch.Tensor:
    """One conversion instruction: RNE for floats (fp32->fp16 overflow: inf on 910B, saturation
    elsewhere), truncation toward zero for float->int (saturating)."""
    dt = DTYPES[dst]
    if t.is_floating_point() and not dt.is_floating_point:
        info = torch.iinfo(dt)
        t = torch.nan_to_num(torch.trunc(t.double()), nan=0.0).clamp(info.min, info.max)
        return t.to(dt)
    if dst in FLOATS and t.is_floating_point() and state.soc != "Ascend910B":
        big = torch.finfo(dt).max
        return t.double().clamp(-big, big).to(dt)
    return t.to(dt)


def cast_to(data, dtype, f1628IntegerFlag=True):
    x = _tensor("cast_to", data)
    dst = compute_dtype(dtype)
    if dst == x.dtype:
        return x
    src = x.dtype
    if src in ("float16",) and dst in ("int8", "uint8") and not f1628IntegerFlag:
        x = vadds(x, -0.5)
    if P.cast_supported(src, dst):
        return _node("cast_to", x, lambda t: _to(t, dst), [x], dtype=dst)
    for via in ("float32", "float16"):      # unsupported pairs go through f32 or f16
        if via not in (src, dst) and P.cast_supported(src, via) and P.cast_supported(via, dst):
            return cast_to(cast_to(x, via), dst)
    raise TbeError(f"E90003: tbe.dsl.cast_to from {src} to {dst} is not supported on {state.soc}")


def broadcast(var, shape, output_dtype=None):
    shape = tuple(int(getattr(s, "value", s)) for s in shape)
    if not isinstance(var, Tensor):
        if isinstance(var, Const):
            dtype = output_dtype or var.dtype
        else:
            dtype = output_dtype or ("int32" if isinstance(var, int) and not isinstance(var, bool) else "float16")
        dtype = compute_dtype(dtype)
        v = _scalar(var, dtype)
        return Tensor(shape, dtype, "tbe.dsl.broadcast", lambda: torch.full(shape, v, dtype=DTYPES[dtype]), [])
    src = var._shape
    if len(src) > len(shape) or any(s not in (1, d) for s, d in zip(src[::-1], shape[::-1])):
        raise TbeError(f"tbe.dsl.broadcast: cannot broadcast shape {list(src)} to {list(shape)} (each source dim "
                       "must equal the target dim or be 1, aligned from the right)")
    out = _node("broadcast", var, lambda t: t.expand(shape), [var], shape=shape)
    if output_dtype and compute_dtype(output_dtype) != var.dtype:
        out = cast_to(out, output_dtype)
    return out


def _rounding(api: str, mode):
    def f(raw_tensor, dtype="int32"):
        x = _tensor(api, raw_tensor)
        P.require(api, x.dtype)
        return _node(api, x, lambda t: _to(mode(t), dtype), [x], dtype=dtype)
    f.__name__ = api
    return f


round = _rounding("round", torch.round)                  # noqa: A001 - the DSL's name; half to even
floor = _rounding("floor", torch.floor)
ceil = _rounding("ceil", torch.ceil)
trunc = _rounding("trunc", torch.trunc)
round_half_up = _rounding("round_half_up", lambda t: torch.sign(t) * torch.floor(t.abs() + 0.5))

# -- reductions ----------------------------------------------------------------------------------


def _axes(api: str, x: Tensor, axis) -> list[int]:
    axes = [axis] if isinstance(axis, int) else list(axis if axis is not None else range(x.ndim))
    out = []
    for a in axes:
        a = int(getattr(a, "value", a))
        if not -x.ndim <= a < x.ndim:
            raise TbeError(f"tbe.dsl.{api}: axis {a} is out of range for shape {list(x._shape)}")
        a %= x.ndim
        if a in out:
            raise TbeError(f"tbe.dsl.{api}: axis {a} given twice")
        out.append(a)
    return sorted(out)


def _fold(t: torch.Tensor, op, pad: float) -> torch.Tensor:
    """Pairwise halving over the last dim, each step one vector op in the tensor's dtype."""
    while t.shape[-1] > 1:
        n = t.shape[-1]
        if n % 2:
            t = torch.cat([t, torch.full((*t.shape[:-1], 1), pad, dtype=t.dtype)], -1)
            n += 1
        t = op(t[..., : n // 2], t[..., n // 2:])
    return t[..., 0]


def _reduce(api: str, op, pad: float):
    def f(raw_tensor, axis=None, keepdims=False, impl_mode=None, priority_flag=None):
        x = _tensor(api, raw_tensor)
        P.require(api, x.dtype)
        axes = _axes(api, x, axis)
        keep = [d for d in range(x.ndim) if d not in axes]
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(x._shape)) if keepdims else \
            tuple(x._shape[d] for d in keep) or (1,)

        def fn(t):
            moved = t.permute(*keep, *axes).reshape(*[x._shape[d] for d in keep], -1)
            return _fold(moved, op, pad)
        return _node(api, x, fn, [x], shape=out_shape)
    f.__name__ = api
    return f


reduce_sum = _reduce("reduce_sum", torch.add, 0.0)
reduce_prod = _reduce("reduce_prod", torch.mul, 1.0)
reduce_max = _reduce("reduce_max", torch.maximum, float("-inf"))
reduce_min = _reduce("reduce_min", torch.minimum, float("inf"))

# -- schedule and build: schedule.py (re-exported: they are tbe.dsl names) ---------------------------

from .schedule import Schedule, auto_schedule, build, classify, compute, shape_to_list, var  # noqa: E402,F401

IntImm = IntImm
