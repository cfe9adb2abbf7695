"""fp16 overflow and NaN: the first layer whose simulated output holds inf/NaN where FP32 is finite, the ranges
that led there, the cause named, and fixes checked by rerunning (the question msprobe's overflow_check and
torch_npu's npu_check_overflow answer on a device: which op first produced a non-finite value).

Causes told apart: a folded BatchNorm whose gamma / sqrt(var + eps) pushes folded weights or bias past fp16's
65504 (ATC ConvBatchnormFusionPass, or AMCT's fold stored in fp16 by ATC); a BatchNorm computed in fp16 on a
channel with a tiny running variance; exp/softmax without max subtraction; a dequantized INT8 output beyond
fp16; any other op whose output leaves fp16's range. Fixes: a larger BatchNorm eps (1e-3, the usual user-side
fix, then 1e-2), the fusion off, the layer kept in FP32 -- each rerun on the fixed batch and scored.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn

from ..accuracy.policy import KEEP_FP32
from ..evaluate.target import Target
from .modes import FloatConv, FoldedBatchNorm, QuantLayer, fold_bn
from .scoring import Scorer
from .variant import QuantVariant

FP16_MAX = 65504.0


@dataclass
class FixTried:
    fix: str                             # what was changed, e.g. "ConvBatchnormFusionPass off"
    nonfinite: float                     # share of the model's outputs still non-finite on the fixed batch
    top1: float | None                   # top-1 on the labelled set (None: not scored, still non-finite)
    verified: bool                       # nothing non-finite left and top-1 within the target


@dataclass
class Finding:
    variant: str
    layer: str
    op_type: str
    cause: str
    nonfinite: float                     # share of the layer's outputs non-finite
    input_range: tuple
    weight_range: tuple | None
    fix: str = ""                        # the first fix that verified
    fixes: list[FixTried] = field(default_factory=list)   # every fix tried, in order

    def as_dict(self) -> dict:
        return asdict(self)


def _range(t: torch.Tensor) -> tuple:
    f = t.float()
    fin = f[torch.isfinite(f)]
    return (float(fin.min()) if fin.numel() else None, float(fin.max()) if fin.numel() else None,
            int((~torch.isfinite(f)).sum()))


def _diagnose(model: nn.Module, v: QuantVariant, layer: str, op_type: str) -> tuple[str, tuple | None, list]:
    """(cause, weight range, fixes to try as (label, how)) for the first non-finite layer."""
    mods = dict(model.named_modules())
    mode = v.layers.get(layer)
    pol = v.as_variant()._policy()
    io = pol.entry(op_type).io if pol else "float32"
    if isinstance(mode, FoldedBatchNorm):                     # the BN row echoes its conv: look at the conv
        layer, mode = mode.into, v.layers.get(mode.into)
    if isinstance(mode, FloatConv) and mode.folded_bn:
        bn = mods[mode.folded_bn]
        factor = (bn.weight.detach().abs() if bn.weight is not None else torch.ones_like(bn.running_var)) \
            / torch.sqrt(bn.running_var.detach() + bn.eps)
        c = int(factor.argmax())
        w16 = mode.weight.to(torch.float16)
        b16 = mode.bias.to(torch.float16) if mode.bias is not None else None
        bad_w = int((~torch.isfinite(w16)).sum())
        bad_b = int((~torch.isfinite(b16)).sum()) if b16 is not None else 0
        what = (f"{bad_w} folded weight(s)" if bad_w else "") + (" and " if bad_w and bad_b else "") + \
               (f"{bad_b} folded bias value(s)" if bad_b else "")
        cause = (f"folded BatchNorm {mode.folded_bn} ({mode.by}): gamma / sqrt(var + eps) reaches "
                 f"{float(factor[c]):.4g} on channel {c} (running_var {float(bn.running_var[c]):.3g}, eps {bn.eps:g}); "
                 + (f"{what} exceed fp16's 65504 once stored in {io}" if bad_w or bad_b else
                    f"the folded conv's output leaves fp16 in {io}"))
        wr = (float(mode.weight.min()), float(mode.weight.max()), bad_w + bad_b)
        # fixes that leave the model alone first: the fold off, then FP32, then the model's eps
        fixes = [("ConvBatchnormFusionPass off" if "ATC" in mode.by else f"skip_fusion_layers [{layer}] and "
                  "ConvBatchnormFusionPass off", ("unfold", layer, None)),
                 (f"{layer} + {mode.folded_bn} kept in FP32", ("fp32", [layer, mode.folded_bn], None)),
                 (f"{mode.folded_bn}.eps = 1e-3", ("eps", mode.folded_bn, 1e-3)),
                 (f"{mode.folded_bn}.eps = 1e-2", ("eps", mode.folded_bn, 1e-2))]
        return cause, wr, fixes
    if isinstance(mode, QuantLayer):
        return (f"dequantized INT8 output of {layer} exceeds fp16's 65504 (deq_scale "
                f"{float(mode.deq_scale.max()):.3g})", None, [(f"{layer} kept in float", ("float", layer, None)),
                                                           (f"{layer} kept in FP32", ("fp32", [layer], None))])
    m = mods.get(layer)
    if isinstance(m, nn.modules.batchnorm._BatchNorm):
        v_min = float(m.running_var.min())
        return (f"BatchNorm {layer} in {io}: (x - mean) / sqrt(var + eps) leaves fp16 (smallest running_var "
                f"{v_min:.3g}, eps {m.eps:g})", None,
                [(f"{layer}.eps = 1e-3", ("eps", layer, 1e-3)), (f"{layer} kept in FP32", ("fp32", [layer], None))])
    if op_type in ("softmax", "log_softmax", "exp"):
        return (f"{op_type} in {io}: exp of large inputs overflows fp16 (no max subtraction in this kernel)", None,
                [(f"{layer} kept in FP32", ("fp32", [layer], None))])
    w = getattr(m, "weight", None) if m is not None else None
    wr = _range(w.detach()) if isinstance(w, torch.Tensor) else None
    return (f"{op_type} output leaves fp16's range (max 65504) in {io}", wr,
            [(f"{layer} kept in FP32", ("fp32", [layer], None))])


def _apply_fix(model: nn.Module, v: QuantVariant, how) -> tuple[QuantVariant, nn.Module]:
    """(variant, model) with one fix applied; the model is a copy when the fix edits it."""
    kind, target, value = how
    v2 = copy.copy(v)
    v2.layers = dict(v.layers)
    v2.layer_overrides = dict(v.layer_overrides)
    v2.name = f"{v.name}+fix"
    if kind == "eps":
        model = copy.deepcopy(model)
        mods = dict(model.named_modules())
        mods[target].eps = value
        bn = v.layers.get(target)
        if isinstance(bn, FoldedBatchNorm) and isinstance(v.layers.get(bn.into), FloatConv):   # refold
            mode = v.layers[bn.into]
            w, b = fold_bn(mods[bn.into].weight, mods[bn.into].bias, mods[target])
            v2.layers[bn.into] = FloatConv(bn.into, mode.geometry, w, b, mode.folded_bn, mode.by)
    elif kind == "unfold":
        mode = v.layers[target]
        v2.layers.pop(target, None)
        v2.layers.pop(mode.folded_bn, None)
    elif kind == "float":
        v2.layers.pop(target, None)
    elif kind == "fp32":
        for t in target:
            mode = v2.layers.get(t)
            if isinstance(mode, FloatConv):             # the conv and its BN as they are, both in FP32
                v2.layers.pop(t)
                v2.layers.pop(mode.folded_bn, None)
            if isinstance(mode, QuantLayer):
                v2.layers.pop(t)
            v2.layer_overrides[t] = KEEP_FP32
    return v2, model


def trace_overflow(scorer: Scorer, variants: dict[str, QuantVariant], target: Target, log=None) -> list[Finding]:
    """One finding per variant whose run on the fixed batch goes non-finite where FP32 does not; each fix is
    rerun on the fixed batch and, when it leaves nothing non-finite, scored on the labelled set."""
    log = log or (lambda m: None)
    findings = []
    for name, v in variants.items():
        bad = scorer.first_nonfinite(v)
        if bad is None:
            continue
        row, op_type, share = bad
        layer = row.split("#")[0]
        log(f"overflow: {name} goes non-finite at {layer}")
        cause, wr, fixes = _diagnose(scorer.model, v, layer, op_type)
        x = scorer.input_of(v, layer)
        f = Finding(name, layer, op_type, cause, share, _range(x) if x is not None else (), wr)
        for label, how in fixes:
            v2, model = _apply_fix(scorer.model, v, how)
            v2.name = f"{name}: {label}"
            nf = scorer.nonfinite(v2, model)
            top1 = scorer.top1(v2, model if model is not scorer.model else None) if nf == 0 else None
            # verified: nothing non-finite left, and top-1 within the target (a fold that stays finite can still
            # lose the channel to fp16 rounding: the bias cancels the sum)
            ok = nf == 0 and target.met(top1)
            f.fixes.append(FixTried(label, nf, top1, ok))
            if ok and not f.fix:
                f.fix = label
        findings.append(f)
    return findings
