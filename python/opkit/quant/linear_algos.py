"""The arithmetic of AMCT's Linear PTQ algorithms: min-max scales, fake-quant, SmoothQuant, GPTQ, AWQ.

Written from hicann/amct (commit in docs/facts/quantization-facts.md, "AMCT's Linear PTQ"), never copied:
scales follow classic/quantize_op/utils.py:88-132, fake-quant common/utils/quant_util.py:333-451, the algorithms
classic/quantize_op/{minmax_module,smooth_quant_module,gptq_module,linear_awq_module}.py and
algorithms/quant/awq.py. Every operation keeps AMCT's dtypes (a float16 model stays float16 where AMCT's does,
scales are float32), so the results are equal bit for bit, not only close.

Differences from classic AMCT (opkit.quant.algorithms): a symmetric range spans 2^(b-1)-1 steps, or 2^(b-1)
when the negative end is the larger (utils.py:213-231), so the most negative value maps to -128 exactly; the
asymmetric offset is rounded after the division (offset = round(-ceil(steps/2) - min/scale)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

FLT_EPSILON = 1.192092896e-7           # AMCT: a scale below this becomes 1.0 (utils.py:31, 39-66)
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


@dataclass(frozen=True)
class WeightSpec:
    bits: int
    strategy: str          # channel | tensor | group
    symmetric: bool
    group_size: int | None


@dataclass
class LinearQuantParams:
    """What AMCT's calibration module holds for one Linear once calibrated."""
    name: str
    algorithm: str
    weight: torch.Tensor                  # the float weight fake-quantized (smoothed, GPTQ-updated, AWQ-scaled)
    bias: torch.Tensor | None
    spec: WeightSpec
    scale_w: torch.Tensor                 # float32: [Cout, 1] channel, [1, 1] tensor, [Cout, groups, 1] group
    offset_w: torch.Tensor | None         # int32, asymmetric only
    act_bits: int | None = None
    scale_d: torch.Tensor | None = None   # float32 [1]: per-tensor INT8 input scale
    offset_d: torch.Tensor | None = None
    act_divisor: torch.Tensor | None = None     # SmoothQuant: x / s (and W * s)
    act_multiplier: torch.Tensor | None = None  # AWQ: x * (1 / s) (and W * s)
    awq_scale: torch.Tensor | None = None       # AWQ: s

    @property
    def smooth(self) -> torch.Tensor | None:
        """The per-input-channel factor s the weight was multiplied by (SmoothQuant's or AWQ's), [1, Cin]."""
        return self.act_divisor if self.act_divisor is not None else self.awq_scale

    def weight_codes(self) -> torch.Tensor:
        """The integer weight (int32) the deployed layer holds."""
        return quantize_grouped(self.weight, self.spec, self.scale_w, self.offset_w)


def int_range(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def minmax_scale(data_max: torch.Tensor, data_min: torch.Tensor, bits: int, symmetric: bool):
    """AMCT's calculate_scale_offset + process_scale for integer types (utils.py:39-132)."""
    hi, lo = data_max.to(torch.float32), data_min.to(torch.float32)
    if symmetric:
        steps = (hi.abs() < lo.abs()) + ((1 << (bits - 1)) - 1)        # 127, or 128 when min is the larger end
        scale, offset = torch.where(hi.abs() > lo.abs(), hi.abs(), lo.abs()) / steps, None
    else:
        hi, lo = hi.clamp(0, None), lo.clamp(None, 0)
        steps = (1 << bits) - 1
        scale = (hi - lo) / steps
        offset = torch.where(hi != lo, -math.ceil(steps / 2) - lo / scale,
                             torch.tensor(-math.ceil(steps / 2), dtype=hi.dtype))
        offset = torch.where(scale < FLT_EPSILON, torch.tensor(-(2.0 ** (bits - 1))), offset)
    scale = torch.where(scale < FLT_EPSILON, torch.tensor(1.0), scale)
    if not (torch.isfinite(scale).all() and torch.isfinite(1 / scale).all()):
        raise ValueError("quant scale is inf, nan or zero (a non-finite value in the calibration data?)")
    return scale.to(torch.float32), None if offset is None else offset.round().to(torch.int32)


def _codes(x, bits, scale, offset):
    q = x / scale
    if offset is not None:
        q = q + offset
    lo, hi = int_range(bits)
    return q.round().clamp(lo, hi)


def fake_quant(x: torch.Tensor, bits: int, scale, offset=None) -> torch.Tensor:
    """quantize -> dequantize in float32, back to x's dtype (quant_util.py:371-394, 438-451)."""
    q = _codes(x, bits, scale, offset)
    return ((q if offset is None else q - offset) * scale).to(x.dtype)


def _grouped(w: torch.Tensor, group_size: int) -> torch.Tensor:
    pad = (-w.shape[-1]) % group_size                       # zero-pad Cin to whole groups (quant_util.py:100-132)
    w = F.pad(w, (0, pad))
    return w.reshape(w.shape[0], -1, group_size)


def quantize_grouped(w, spec: WeightSpec, scale, offset) -> torch.Tensor:
    if spec.strategy != "group":
        return _codes(w, spec.bits, scale, offset).to(torch.int32)
    q = _codes(_grouped(w, spec.group_size), spec.bits, scale, offset)
    return q.reshape(w.shape[0], -1)[:, :w.shape[1]].to(torch.int32)


def fake_quant_w(w: torch.Tensor, spec: WeightSpec, scale, offset) -> torch.Tensor:
    if spec.strategy != "group":
        return fake_quant(w, spec.bits, scale, offset)
    dq = fake_quant(_grouped(w, spec.group_size), spec.bits, scale, offset)
    return dq.reshape(w.shape[0], -1)[:, :w.shape[1]]


def weight_scale(w: torch.Tensor, spec: WeightSpec):
    """Min-max weight scale by strategy (utils.py:135-164): per output channel, tensor or input group."""
    if spec.strategy == "channel":
        hi, lo = w.max(dim=1, keepdim=True).values, w.min(dim=1, keepdim=True).values
    elif spec.strategy == "tensor":
        hi, lo = w.max().reshape(1, 1), w.min().reshape(1, 1)
    else:
        g = _grouped(w, spec.group_size)
        hi, lo = g.max(dim=-1, keepdim=True).values, g.min(dim=-1, keepdim=True).values
    return minmax_scale(hi, lo, spec.bits, spec.symmetric)


def fake_quant_weight(p: LinearQuantParams) -> torch.Tensor:
    return fake_quant_w(p.weight, p.spec, p.scale_w, p.offset_w)


def bias_on_grid(p: LinearQuantParams):
    """With INT8 inputs the bias is deployed as INT32 at scale_d * scale_w (minmax_module.py:167-178)."""
    if p.bias is None or p.scale_d is None:
        return p.bias
    deq = (p.scale_d * p.scale_w).reshape(-1)
    return ((p.bias / deq).round().clamp(INT32_MIN, INT32_MAX) * deq).to(p.bias.dtype)


class Calibrator:
    """One algorithm's calibration state for one Linear. ``observe(x)`` sees one calibration batch and returns
    the layer's output for it, or None when the layer must answer in fake-quant (parameters just fixed);
    ``params`` is set once calibrated."""

    def __init__(self, name: str, linear: nn.Linear, config):
        self.name, self.config = name, config
        self.weight = linear.weight.detach().clone()
        self.bias = None if linear.bias is None else linear.bias.detach().clone()
        self.spec = config.weight
        self.seen = 0
        self.params: LinearQuantParams | None = None

    def _params(self, weight, scale_w, offset_w, **kw) -> LinearQuantParams:
        return LinearQuantParams(self.name, self.config.algorithm, weight, self.bias, self.spec, scale_w, offset_w,
                                 **kw)

    def observe(self, x):
        raise NotImplementedError


class MinMax(Calibrator):
    """minmax_module.py: weight scale from the weight at once; INT8 input range = running min/max over the
    batch_num batches (per tensor). Weight-only layers answer in fake-quant even while calibrating."""

    def __init__(self, name, linear, config):
        super().__init__(name, linear, config)
        self.scale_w, self.offset_w = weight_scale(self.weight, self.spec)
        self.hi = self.lo = None
        if not config.act_bits:
            self.params = self._params(self.weight, self.scale_w, self.offset_w)

    def observe(self, x):
        self.seen += 1
        hi, lo = torch.max(x).reshape(-1), torch.min(x).reshape(-1)
        self.hi = hi if self.hi is None else torch.where(hi > self.hi, hi, self.hi)
        self.lo = lo if self.lo is None else torch.where(lo < self.lo, lo, self.lo)
        if self.seen == self.config.batch_num:
            scale_d, offset_d = minmax_scale(self.hi, self.lo, self.config.act_bits, self.config.act_symmetric)
            self.params = self._params(self.weight, self.scale_w, self.offset_w, act_bits=self.config.act_bits,
                                       scale_d=scale_d, offset_d=offset_d)
        return F.linear(x, self.weight, self.bias)


class SmoothQuant(Calibrator):
    """smooth_quant_module.py: per input channel |x| max over the batches; s = amax|x|^a / amax|W|^(1-a) (in the
    model's dtype; zero or non-finite s -> 1); W * s quantized, x / s per-tensor INT8."""

    def __init__(self, name, linear, config):
        super().__init__(name, linear, config)
        cin = self.weight.shape[-1]
        self.hi = torch.full((1, cin), -torch.inf, dtype=self.weight.dtype)
        self.lo = torch.full((1, cin), torch.inf, dtype=self.weight.dtype)

    def observe(self, x):
        self.seen += 1
        flat = x.reshape(-1, x.shape[-1])
        hi, lo = flat.amax(dim=0, keepdim=True), flat.amin(dim=0, keepdim=True)
        self.hi = torch.where(hi > self.hi, hi, self.hi)
        self.lo = torch.where(lo < self.lo, lo, self.lo)
        if self.seen == self.config.batch_num:
            self._fix()
        return F.linear(x, self.weight, self.bias)

    def _fix(self):
        a = self.config.smooth_strength
        act_max = torch.max(self.hi.abs(), self.lo.abs())
        s = act_max ** a / self.weight.abs().amax(dim=0, keepdim=True) ** (1 - a)
        bad = (s < torch.finfo(act_max.dtype).eps) | ~torch.isfinite(s)
        s = torch.where(bad, torch.tensor(1.0, dtype=s.dtype), s)
        w = self.weight * s
        scale_w, offset_w = weight_scale(w, self.spec)
        scale_d, offset_d = minmax_scale((self.hi / s).max().reshape(-1), (self.lo / s).min().reshape(-1),
                                         self.config.act_bits, self.config.act_symmetric)
        self.params = self._params(w, scale_w, offset_w, act_bits=self.config.act_bits, scale_d=scale_d,
                                   offset_d=offset_d, act_divisor=s)


class GPTQ(Calibrator):
    """gptq_module.py: H = 2/n sum x x^T over the batch_num batches; then column by column (most-used input
    first, blocks of 128) quantize and spread the error over the columns not yet quantized through the upper
    Cholesky factor of H^-1 (1% damping). The scale is fixed from the weight before the updates."""
    DAMP, BLOCK = 0.01, 128

    def __init__(self, name, linear, config):
        super().__init__(name, linear, config)
        if not torch.isfinite(self.weight).all():
            raise ValueError(f"{name}'s weight has inf or nan (GPTQ)")
        self.h = torch.zeros(self.weight.shape[1], self.weight.shape[1])
        self.n = 0

    def observe(self, x):
        self.seen += 1
        x3 = x.unsqueeze(0) if x.dim() == 2 else x
        batch = x3.shape[0]
        self.h *= self.n / (self.n + batch)
        self.n += batch
        xt = math.sqrt(2 / self.n) * x3.reshape(-1, x3.shape[-1]).t().float()
        self.h += xt.matmul(xt.t())
        if not torch.isfinite(self.h).all():
            raise ValueError(f"{self.name}'s Hessian has inf or nan (GPTQ)")
        if self.seen < self.config.batch_num:
            return F.linear(x, self.weight, self.bias)
        w, scale_w, offset_w = self._solve()
        self.params = self._params(w, scale_w, offset_w)
        return None                              # AMCT answers this batch in fake-quant already

    def _inverse_factor(self, h):
        diag = torch.arange(len(h))
        h[diag, diag] += self.DAMP * torch.mean(torch.diag(h))
        return torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)

    def _solve(self):
        w, h = self.weight.clone().float(), self.h
        dead = torch.diag(h) == 0
        h[dead, dead] = 1
        w[:, dead] = 0
        perm = torch.argsort(torch.diag(h), descending=True)
        scale_w, offset_w = weight_scale(w, self.spec)
        ws, hinv = w[:, perm], self._inverse_factor(h[perm][:, perm])
        for b0 in range(0, ws.shape[1], self.BLOCK):
            b1 = min(b0 + self.BLOCK, ws.shape[1])
            blk, hb = ws[:, b0:b1], hinv[b0:b1, b0:b1]
            errs = torch.zeros_like(blk)
            for i in range(b1 - b0):
                col = blk[:, i]
                err = (col - self._column_fq(col, int(perm[b0 + i]), scale_w, offset_w)) / hb[i, i]
                blk[:, i:] -= err.unsqueeze(1).matmul(hb[i, i:].unsqueeze(0))
                errs[:, i] = err
            ws[:, b1:] -= errs.matmul(hinv[b0:b1, b1:])
        return ws[:, torch.argsort(perm)].to(self.weight.dtype), scale_w, offset_w

    def _column_fq(self, col, j, scale_w, offset_w):
        """One weight column fake-quantized with its output channels' scales (its group's, when grouped)."""
        if self.spec.strategy == "group":
            g = j // self.spec.group_size
            scale_w = scale_w[:, g]
            offset_w = None if offset_w is None else offset_w[:, g]
        return fake_quant(col.reshape(-1, 1), self.spec.bits, scale_w, offset_w).reshape(-1)


class AWQ(Calibrator):
    """linear_awq_module.py + algorithms/quant/awq.py:57-128, on the first calibration batch only: for
    r = g / grids_num, s = mean|x|^r (>= 1e-4, float64), normalized by sqrt(max s * min s), in the model's dtype;
    keep the s whose layer output with W' = fq(W * s) / s is nearest the float output (mean 4th power);
    then W * s is quantized and the input multiplied by 1 / s."""

    def observe(self, x):
        self.seen += 1
        if not torch.isfinite(x).all() or not torch.isfinite(self.weight).all():
            raise ValueError(f"{self.name}: nan or inf in the input or weight (AWQ)")
        ref = F.linear(x, self.weight, self.bias)
        s = self._search(x, ref)
        w = self.weight * s
        scale_w, offset_w = weight_scale(w, self.spec)
        self.params = self._params(w, scale_w, offset_w, act_multiplier=1 / s, awq_scale=s)
        return ref

    def _search(self, x, ref):
        mean = x.abs().contiguous().view(-1, x.shape[-1]).mean(0)
        best, best_loss = None, torch.tensor(float("inf"))
        for g in range(self.config.grids_num):
            s = mean.pow(g / self.config.grids_num).clamp(min=1e-4).to(torch.float64).view(1, -1)
            s = (s / (s.max() * s.min()).sqrt()).to(x.dtype).clamp(1e-4, torch.finfo(x.dtype).max)
            ws = self.weight.mul(s)
            scale, offset = weight_scale(ws, self.spec)
            loss = (ref - F.linear(x, fake_quant_w(ws, self.spec, scale, offset) / s, self.bias)).float().pow(4).mean()
            if not torch.isnan(loss) and loss < best_loss:
                best, best_loss = s, loss
        if best is None or torch.isinf(best_loss):
            raise ValueError(f"{self.name}: AWQ found no finite loss")
        return best


_CALIBRATORS = {"minmax": MinMax, "smoothquant": SmoothQuant, "gptq": GPTQ, "awq": AWQ}


def make_calibrator(algorithm: str, name: str, linear: nn.Linear, config) -> Calibrator:
    return _CALIBRATORS[algorithm](name, linear, config)
