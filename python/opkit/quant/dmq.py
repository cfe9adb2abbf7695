"""AMCT's DMQ balancer (classic flow): migrate activation outliers into the weights before INT8 calibration.

Written from hicann/amct (commit in docs/facts/quantization-facts.md, "DMQ balancer"), paths relative to
amct_pytorch/classic/graph_based/amct_pytorch/: ``quantize_preprocess`` (quantize_tool.py:96-142) folds
BatchNorm, wraps every layer whose config has ``dmq_balancer_param`` (the migration strength, 0.2-0.8), and the
first calibration forward records one factor per input channel (custom_op/dmq_balancer/dmq_balancer.py,
dmq_balancer_func.py:54-109). ``quantize_model`` then quantizes ``W * f`` (optimizer/weight_calibration.py:71-110)
and puts a Mul by ``1 / f`` before the layer (optimizer/apply_dmq_balancer_pass.py:105-160), so the activation is
calibrated and quantized as ``x / f``.

    factors = balance_factors(model, calib[:n], {"conv1": 0.5, "fc": 0.5})   # AMCT's record values
    balanced = apply_balance(model, factors)     # W * f, and x * (1 / f) before each layer (forward pre-hook)

The balanced model computes what the original does (up to rounding) and is then quantized by the usual flow
(opkit quant's ARQ + IFMR/HFMG see ``W * f`` and ``x / f``, as AMCT's calibration does). Fold BatchNorm first,
as AMCT does before balancing (its ConvBnFusionPass calls torch.ao.quantization.fuse_modules): the factors
depend on the folded weights.
"""
from __future__ import annotations

import copy

import torch
import torch.nn as nn

from ..errors import OpkitError

FLT_EPSILON = 1.192092896e-7
STRENGTH_RANGE = (0.2, 0.8)            # AMCT common/config field.py DMQBalancerParamField; dmq_balancer_func.py:63
BALANCED_TYPES = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "Linear")


def _channels_first(x: torch.Tensor, w: torch.Tensor, m: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """Activation and weight as [Cin, -1] (dmq_balancer.py:50-111): the activation's channel axis is 1 for
    convolutions, -1 for Linear; a grouped conv's weight [Cout, Cin/g, k..] is laid out by group."""
    kind = type(m).__name__
    x = x.transpose(0, -1 if kind == "Linear" else 1)
    if kind.startswith("Conv") and not kind.startswith("ConvTranspose") and m.groups > 1:
        w = w.reshape(m.groups, -1, *w.shape[1:]).transpose(2, 1)
        w = w.reshape(-1, *w.shape[2:])
    else:
        w = w.transpose(0, 0 if kind.startswith("ConvTranspose") else 1)   # cin axis: 0 for ConvTranspose
    return x.reshape(x.shape[0], -1), w.reshape(w.shape[0], -1)


def balance_factor(x: torch.Tensor, w: torch.Tensor, strength: float) -> torch.Tensor:
    """One factor per input channel from [C, -1] activation and weight (dmq_balancer_func.py:54-109):
    f = amax|x|^a / amax|W|^(1-a); a channel whose activation is all zero gets (max_c amax|W_c| f_c) / amax|W|,
    one whose weight is zero amax|x| / (max_c amax|x_c| / f_c), both zero 1."""
    if not STRENGTH_RANGE[0] <= strength <= STRENGTH_RANGE[1]:
        raise OpkitError(f"dmq_balancer_param (migration strength) {strength} is not in [0.2, 0.8]")
    x = x.float() if x.dtype == torch.float16 else x
    w = w.float() if w.dtype == torch.float16 else w
    eps = torch.finfo(x.dtype).eps
    if x.abs().max() < eps or w.abs().max() < eps:
        return torch.ones(x.shape[0], dtype=x.dtype)        # AMCT means this; its line raises (docs/facts)
    a_max, w_max = x.abs().amax(dim=1, keepdim=True), w.abs().amax(dim=1, keepdim=True)
    a0, w0 = a_max < eps, w_max < eps
    zero = torch.tensor(0, dtype=a_max.dtype)
    f = torch.where(w0, zero, a_max ** strength / w_max ** (1 - strength))
    fz = f < eps
    a_out = torch.where(fz, zero, a_max / f).max()
    w_out = torch.where(fz, zero, w_max * f).max()
    f[a0 & w0] = 1.0
    f[a0 & ~w0] = w_out / w_max[a0 & ~w0]
    f[~a0 & w0] = a_max[~a0 & w0] / a_out
    f = f.reshape(-1)
    if not (torch.all(f > FLT_EPSILON) and torch.all(f < 1 / FLT_EPSILON)):   # custom_op/utils.py:63-78
        raise OpkitError("DMQ balance factor outside [FLT_EPSILON, 1/FLT_EPSILON]")
    return f


def balance_factors(model: nn.Module, x: torch.Tensor, strengths: dict[str, float]) -> dict[str, torch.Tensor]:
    """Each layer's factor from its input on one forward of ``x`` (AMCT records the first calibration forward).
    ``strengths``: layer -> migration strength (AMCT's ``dmq_balancer_param``)."""
    mods = dict(model.named_modules())
    seen: dict[str, torch.Tensor] = {}
    hooks = []
    for name in strengths:
        m = mods.get(name)
        if m is None or type(m).__name__ not in BALANCED_TYPES:
            raise OpkitError(f"dmq_balancer_param on {name!r}: not a {'/'.join(BALANCED_TYPES)} layer of the model")
        hooks.append(m.register_forward_pre_hook(lambda mod, args, n=name: seen.setdefault(n, args[0].detach())))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    missing = sorted(set(strengths) - set(seen))
    if missing:
        raise OpkitError(f"dmq_balancer_param on {', '.join(missing)}: the layer never ran on the calibration data")
    return {n: balance_factor(*_channels_first(seen[n], mods[n].weight.detach(), mods[n]), strengths[n])
            for n in strengths}


def _cin_shape(m: nn.Module, w: torch.Tensor) -> list[int]:
    shape = [1] * w.dim()
    shape[0 if type(m).__name__.startswith("ConvTranspose") else 1] = -1
    return shape


def scale_weight(m: nn.Module, f: torch.Tensor, w: torch.Tensor | None = None) -> torch.Tensor:
    """W * f along the input channels (weight_calibration.py:71-110): f in the weight's dtype; a grouped conv's
    weight is laid out by group first. ``w``: the weight to scale (default the module's; opkit quant passes the
    BN-folded one)."""
    w = m.weight.detach() if w is None else w
    f = f.to(torch.float16 if w.dtype == torch.float16 else torch.float32)
    grouped = type(m).__name__ in ("Conv1d", "Conv2d", "Conv3d") and m.groups > 1
    if grouped:   # [Cout, Cin/g, k..] -> [Cin/g, Cout, k..] with Cout grouped: f indexes (group, cin) pairs
        wg = w.reshape(m.groups, -1, *w.shape[1:]).transpose(1, 2)       # [g, Cin/g, Cout/g, k..]
        fg = f.reshape(m.groups, -1, *([1] * (w.dim() - 1)))
        return (wg * fg).transpose(1, 2).reshape(w.shape)
    return w * f.reshape(_cin_shape(m, w))


def inverse_factor(m: nn.Module, f: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """AMCT's Mul before the balanced layer: 1 / f computed in float32 and stored in the weight's dtype
    (apply_dmq_balancer_pass.py:115-160), shaped to broadcast over the layer's input (channel axis 1 for
    convolutions, the last for Linear)."""
    inv = (1.0 / f.to(torch.float32).numpy()).astype("float16" if dtype == torch.float16 else "float32")
    shape = [1, -1] + [1] * (m.weight.dim() - 2) if type(m).__name__ != "Linear" else [-1]
    return torch.from_numpy(inv).reshape(shape)


def channels_first(x: torch.Tensor, w: torch.Tensor, m: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """Activation and weight as [Cin, -1], the layout DMQ's factor is computed on (opkit quant's calibration)."""
    return _channels_first(x, w, m)


def apply_balance(model: nn.Module, factors: dict[str, torch.Tensor]) -> nn.Module:
    """A deep copy with each layer's weight W * f and its input multiplied by 1 / f first (AMCT's Mul node,
    the factor in the weight's dtype, apply_dmq_balancer_pass.py:115-160)."""
    model = copy.deepcopy(model)
    mods = dict(model.named_modules())
    for name, f in factors.items():
        m = mods[name]
        m.dmq_unbalanced_weight = m.weight.detach().clone()   # not a buffer: ADA reads it (AMCT's alpha quirk)
        with torch.no_grad():
            m.weight.copy_(scale_weight(m, f))
        m.register_buffer("dmq_inverse_factor", inverse_factor(m, f, m.weight.dtype))
        m.register_buffer("dmq_factor", f.to(m.weight.dtype).clone())     # for ADA, which divides by f itself
        m.register_forward_pre_hook(lambda mod, args: (args[0] * mod.dmq_inverse_factor,) + tuple(args[1:]))
    return model
