"""``te.lang.cce``: the older spelling of the same DSL. Two differences kept (docs/tbe.md): its wrappers
auto-cast an input whose dtype the SoC lacks for the API (to float32 if supported, else float16) and
return the new dtype, and ``vrec`` defaults to high precision (Newton steps). ``sum`` is reduce_sum."""
from __future__ import annotations

import functools

from . import dsl
from . import platform as P
from .graph import Tensor

API = ("vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vand", "vor", "vmod", "vadds", "vmuls", "vmaxs", "vmins",
       "vexp", "vabs", "vnot", "vrelu", "vlog", "vsqrt", "vrsqrt", "vlrelu", "vcmp", "vsel", "vcmpsel", "vaxpy",
       "vmla", "vmadd", "clip", "broadcast", "cast_to", "round", "floor", "ceil", "trunc", "round_half_up",
       "reduce_sum", "reduce_prod", "reduce_max", "reduce_min")
_NO_AUTOCAST = ("broadcast", "cast_to", "vcmp", "vsel", "vcmpsel")


def _auto_cast(api: str, fn):
    """One input the SoC lacks -> float32 if the API takes it and the cast exists, else float16; two
    tensors that differ in dtype (or one unsupported) -> both so. (The rule of the TE lineage's
    elewise auto-cast decorators, as published in MindSpore AKG's elewise_compute.py; docs/tbe.md.)"""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if api not in _NO_AUTOCAST:
            tensors = [a for a in args if isinstance(a, Tensor)]
            if any(not P.supports(api, t.dtype) for t in tensors) or len({t.dtype for t in tensors}) > 1:
                to = _common(api, tensors)
                args = tuple(dsl.cast_to(a, to) if isinstance(a, Tensor) and a.dtype != to else a for a in args)
        return fn(*args, **kwargs)
    return wrapper


def _common(api: str, tensors) -> str:
    if P.supports(api, "float32") and all(t.dtype == "float32" or P.cast_supported(t.dtype, "float32")
                                          for t in tensors):
        return "float32"
    return "float16"     # if even that does not fit, the DSL call raises E90003 as the device would


def names() -> dict:
    out = {name: _auto_cast(name, getattr(dsl, name)) for name in API}
    vrec = _auto_cast("vrec", dsl.vrec)
    out["vrec"] = lambda raw_tensor, priority_flag=1: vrec(raw_tensor, "high_precision" if priority_flag == 1
                                                           else "high_performance")
    out["sum"] = out["reduce_sum"]
    out["vsubs"] = lambda raw_tensor, scalar: out["vadds"](raw_tensor, -float(getattr(scalar, "value", scalar)))
    out["round_to"] = lambda data, max_value, min_value: out["clip"](data, max_value, min_value)
    out["round_d"] = out["round_half_up"]
    out["cce_build_code"] = dsl.build
    out["auto_schedule"] = dsl.auto_schedule
    out["build"] = dsl.build
    return out
