"""Per-layer modes of the simulation engine (opkit/accuracy/simulate.py ``LayerMode``) for quantized models.

- ``QuantLayer``: a Conv1d/Conv2d (grouped, depthwise)/Conv3d, ConvTranspose2d, AvgPool2d or Linear in INT8 as the device runs AMCT's deploy model:
  AscendQuant (activation -> int codes), the cube on integer codes with exact integer accumulation plus the int32
  bias, AscendDequant (int32 * deq_scale -> the policy's I/O dtype). Under a policy the quant step is the TBE
  kernel's fp16 arithmetic (input cast to fp16, times fp16(1/scale_d), plus offset, rounded, saturated); without a
  policy it is AMCT's fp32 fake-quant formula (calibration, sensitivity). 4- and 16-bit activations are what-if
  modes: fp32 quant arithmetic, no device kernel modelled.
- ``FloatConv``: a conv running with other weights than its module's, under the policy (a BatchNorm folded into
  it: AMCT's do_fusion in FP32, or ATC's ConvBatchnormFusionPass with the folded weights stored in fp16).
- ``FoldedBatchNorm``: the BatchNorm that was folded away (identity).
- ``CalibLayer``: AMCT's calibration graph: fake-quantized (folded) weights in FP32, the layer's input recorded.

All hold tensors and numbers only, so a variant pickles (Ray workers, issue 22).
"""
from __future__ import annotations

import functools
import hashlib
import weakref
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..accuracy.simulate import LayerMode
from . import fused, int_gemm
from .algorithms import int_range, quantize

F16, F32, F64 = torch.float16, torch.float32, torch.float64
INT32_MAX = 2 ** 31 - 1


_CONV = {"conv1d": F.conv1d, "conv2d": F.conv2d, "conv3d": F.conv3d}
TRANSPOSED = {"conv_transpose1d": F.conv_transpose1d, "conv_transpose2d": F.conv_transpose2d}


@dataclass
class ConvGeometry:
    """What F.conv*d / F.conv_transpose2d / F.avg_pool2d / F.linear need besides the tensors (plain values,
    picklable)."""
    op_type: str                 # conv1d | conv2d | conv3d | conv_transpose1d | conv_transpose2d | avg_pool2d | linear
    stride: tuple = (1,)
    padding: object = (0,)
    dilation: tuple = (1,)
    groups: int = 1
    output_padding: tuple = (0,)         # conv_transpose1d/2d
    kernel: tuple = ()                   # avg_pool2d: kernel_size
    pool: tuple = ()                     # avg_pool2d: (ceil_mode, count_include_pad, divisor_override)

    @classmethod
    def of(cls, m: nn.Module) -> "ConvGeometry":
        if isinstance(m, nn.Linear):
            return cls("linear")
        if isinstance(m, nn.AvgPool2d):
            pair = nn.modules.utils._pair
            return cls("avg_pool2d", pair(m.stride if m.stride is not None else m.kernel_size), pair(m.padding),
                       kernel=pair(m.kernel_size), pool=(m.ceil_mode, m.count_include_pad, m.divisor_override))
        kind = {nn.Conv1d: "conv1d", nn.Conv3d: "conv3d", nn.ConvTranspose1d: "conv_transpose1d",
                nn.ConvTranspose2d: "conv_transpose2d"}.get(type(m), "conv2d")
        out_pad = tuple(m.output_padding) if kind in TRANSPOSED else (0,)
        return cls(kind, tuple(m.stride), m.padding if isinstance(m.padding, str) else tuple(m.padding),
                   tuple(m.dilation), int(m.groups), out_pad)

    @property
    def weighted(self) -> bool:
        """False for an AvgPool2d: AMCT records scale_w 1.0 for it and quantizes no weight."""
        return self.op_type != "avg_pool2d"

    def apply(self, x: torch.Tensor, w: torch.Tensor | None, b: torch.Tensor | None = None) -> torch.Tensor:
        if self.op_type == "linear":
            return F.linear(x, w, b)
        if self.op_type == "avg_pool2d":
            ceil, include_pad, divisor = self.pool
            return F.avg_pool2d(x, self.kernel, self.stride, self.padding, ceil, include_pad, divisor)
        if self.op_type in TRANSPOSED:
            return TRANSPOSED[self.op_type](x, w, b, self.stride, self.padding, self.output_padding, self.groups,
                                            self.dilation)
        return _CONV[self.op_type](x, w, b, self.stride, self.padding, self.dilation, self.groups)

    def out_axis(self) -> int:
        """The weight's output-channel axis: 1 for a transposed conv ([C_in, C_out / groups, k...]), else 0."""
        return 1 if self.op_type in TRANSPOSED else 0

    def weight_view(self, t: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """A per-output-channel vector (or a scalar) shaped to broadcast against the weight (a grouped transposed
        conv: expanded to the weight's shape, output channel o = group * C_out/groups + j at [group's rows, j])."""
        if t.numel() == 1:
            return t.reshape([])
        if self.out_axis() == 1 and self.groups > 1:
            g, k = self.groups, [1] * (w.dim() - 2)
            full = t.reshape(g, 1, -1, *k).expand(g, w.shape[0] // g, w.shape[1], *w.shape[2:])
            return full.reshape(w.shape)
        shape = [1] * w.dim()
        shape[self.out_axis()] = -1
        return t.reshape(shape)

    def out_in(self, w: torch.Tensor) -> torch.Tensor:
        """A transposed conv's weight as [C_out, C_in/groups, k...], the layout AMCT's ARQ reads
        (utils/weight_quant_api.py:34-59 adjust_deconv_weight_shape)."""
        g = self.groups
        if g == 1:
            return w.transpose(0, 1)
        x = w.reshape(g, w.shape[0] // g, *w.shape[1:]).transpose(1, 2)
        return x.reshape(-1, w.shape[0] // g, *w.shape[2:])

    def fan_in(self, codes: torch.Tensor) -> int:
        """Products summed into one output: C_in/groups x kernel (a transposed conv: at most C_in x kernel)."""
        return codes.shape[0] * codes[0, 0].numel() if self.op_type in TRANSPOSED else codes[0].numel()

    def channel_view(self, t: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """A per-output-channel vector shaped to broadcast against the op's output."""
        if self.op_type == "linear":
            return t.reshape(-1)
        return t.reshape([1, -1] + [1] * (out.dim() - 2))


def exact_product(apply, x: torch.Tensor, w: torch.Tensor, k: int) -> torch.Tensor:
    """``apply(x, w)`` (a conv or matmul) on integer codes, exactly, as float64. Integer-valued float operands
    sum exactly in any order while every partial sum stays below the float's integer limit: float32 (2^24) when
    K * max|x| * max|w| allows it, else float32 on ``w`` split into 4-bit halves (w = 16 hi + lo, |w| <= 128),
    else float64 (2^53)."""
    ax = float(x.abs().max()) if x.numel() else 0.0
    aw = float(w.abs().max()) if w.numel() else 0.0
    exact32 = exact32_allowed()
    if exact32 and k * ax * aw < 2 ** 24:
        return apply(x.to(F32), w.to(F32)).to(F64)
    if exact32 and aw <= 128 and k * ax * 16 < 2 ** 24:
        lo = torch.remainder(w.to(F32), 16)                      # 0..15
        hi = (w.to(F32) - lo) / 16                               # -8..7
        xf = x.to(F32)
        return 16 * apply(xf, hi).to(F64) + apply(xf, lo).to(F64)
    return apply(x.to(F64), w.to(F64))


def exact32_allowed() -> bool:
    """Float32 convs and matmuls run in full float32 (no TF32/bf16 shortcut): the condition for exactness."""
    if torch.get_float32_matmul_precision() != "highest":
        return False
    for knob in _mkldnn_knobs():                 # oneDNN's own precision knobs (newer torch), when present
        prec = getattr(knob, "fp32_precision", None)
        if prec not in (None, "none", "ieee"):
            return False
    return True


@functools.lru_cache(maxsize=1)
def _mkldnn_knobs() -> tuple:
    """torch.backends.mkldnn's matmul and conv knob objects (fixed once torch is imported; their precision is read
    on every call): resolved once, as every INT8 layer call asks exact32_allowed."""
    mk = getattr(torch.backends, "mkldnn", None)
    return tuple(k for k in (getattr(mk, "matmul", None), getattr(mk, "conv", None)) if k is not None)


F32_LIMIT = 2 ** 24
MAX_CHUNKS = 16


def _channel_bounds(codes: torch.Tensor, x_hi: int, x_lo: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per output channel o and input channel c: the largest and the smallest (<= 0) sum over the kernel window of
    max(0, x*w) and min(0, x*w) for x in [x_lo, x_hi] -- the extremes any subset of those products can sum to."""
    w = codes.detach().to(F64)
    w = w.reshape(w.shape[0], w.shape[1], -1)
    ends = torch.stack([w * x_hi, w * x_lo])
    up = ends.amax(0).clamp(min=0).sum(-1)
    dn = ends.amin(0).clamp(max=0).sum(-1)
    return up, dn


class BoundedCache:
    """A dict that drops its oldest entries (first in, first out) past ``max_entries`` or, when ``max_bytes`` is
    set, past that many bytes of the sizes ``put`` is given: a module-level cache that outlives the runs it serves
    must not grow with the models a process quantizes."""

    def __init__(self, max_entries: int, max_bytes: int | None = None):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._d: dict = {}          # key -> (value, bytes)
        self.nbytes = 0

    def get(self, key, default=None):
        got = self._d.get(key)
        return default if got is None else got[0]

    def put(self, key, value, nbytes: int = 0) -> None:
        if key in self._d:
            self.nbytes -= self._d.pop(key)[1]
        self._d[key] = (value, nbytes)
        self.nbytes += nbytes
        while self._d and (len(self._d) > self.max_entries
                           or (self.max_bytes is not None and self.nbytes > self.max_bytes)):
            self.nbytes -= self._d.pop(next(iter(self._d)))[1]

    def clear(self) -> None:
        self._d.clear()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key) -> bool:
        return key in self._d


# True: _plan_of takes a conv layer's channel bounds from its codes' positive and negative window sums, kept per
# codes content, times the input range's ends -- the same integers (below): the search's calibrations give one
# layer the same codes with other input ranges (each record its own offset_d), and the bounds were the whole cost
# of a fresh layer build on ResNet-18. Only for windows > 1: a window-1 layer (Linear, 1x1 conv) has sums as large
# as its codes and _channel_bounds is then only ~2x slower (768x3072: 149 vs 76 ms), against ~14x for a 3x3 conv.
# False: _channel_bounds on every plan.
SPLIT_BOUNDS = True
# The kept sums are int32, 8 bytes per (output, input) channel pair -- 8/9 of the int8 codes' bytes on a 3x3 conv;
# 64 MB holds the base and DMQ codes of a ResNet-50 or a VGG-16 (~13 MB a codes set), and is the most a process keeps.
MAX_SIGN_SUMS_BYTES = 64 << 20
_SIGN_SUMS = BoundedCache(512, MAX_SIGN_SUMS_BYTES)   # codes' content -> (max|w|, P, N) (_split_bounds)


def _sign_sums(codes: torch.Tensor, content) -> tuple:
    """(max|w|, P, N) of integer codes [C_out, C_in, *window]: P and N the window sums of max(w, 0) and max(-w, 0),
    int32 (exact: max|w| * window < 2^31 for int8/int16 codes and any real kernel; int64 past that), kept per
    ``content``. max|w| from min and max (``abs`` of an int8 -128 or an int16 -32768 wraps to itself)."""
    got = _SIGN_SUMS.get(content)
    if got is None:
        w = codes.detach().to(torch.int64)
        w = w.reshape(w.shape[0], w.shape[1], -1)
        peak = max(-int(w.min()), int(w.max()), 0)
        dtype = torch.int32 if peak * w.shape[2] < 2 ** 31 else torch.int64
        got = (peak, w.clamp(min=0).sum(-1).to(dtype), (-w).clamp(min=0).sum(-1).to(dtype))
        _SIGN_SUMS.put(content, got, got[1].nbytes + got[2].nbytes)
    return got


def _split_bounds(codes: torch.Tensor, x_hi: int, x_lo: int, content) -> tuple | None:
    """``_channel_bounds(codes, x_hi, x_lo)`` as max(x_hi, 0) P + max(-x_lo, 0) N and -(max(-x_lo, 0) P +
    max(x_hi, 0) N), P and N the window sums of max(w, 0) and max(-w, 0) (kept per ``content``, the codes'
    digest: _sign_sums). Per weight w the larger end w*x_hi or w*x_lo, clamped at 0, is w*max(x_hi, 0) for w >= 0
    and |w|*max(-x_lo, 0) for w < 0 (the smaller end likewise), so both are sums of the same integer products;
    every product and sum is an integer below 2^53, exact in float64 in any order -- the same values (a zero's
    sign aside, which no comparison or max downstream sees). None (not taken) for a window of 1 (not worth
    keeping, see SPLIT_BOUNDS), codes that are not integers, x_lo > x_hi, or products that could pass 2^52."""
    if codes.dim() <= 2 or codes[0, 0].numel() == 1 or codes.numel() == 0 or codes.is_floating_point() \
            or x_lo > x_hi:
        return None
    window = codes[0, 0].numel()
    peak_w, pos, neg = _sign_sums(codes, content)
    if peak_w * max(abs(int(x_hi)), abs(int(x_lo))) * window >= 2 ** 52:
        return None
    pos, neg = pos.to(F64), neg.to(F64)
    a, b = float(max(x_hi, 0)), float(max(-x_lo, 0))
    return a * pos + b * neg, -(b * pos + a * neg)


def plan_chunks(codes: torch.Tensor, x_hi: int, groups: int = 1, x_lo: int | None = None,
                bounds: tuple | None = None) -> tuple | None:
    """Input-channel chunks ((c0, c1), ...) of a conv/linear on integer codes over which ONE float32 conv/matmul
    per chunk is exact, decided from the weight codes and the range [x_lo, x_hi] of the input codes alone (not
    per call; x_lo defaults to -x_hi).

    Output channel o of a chunk S sums the products x_j * w_oj, j in S; every partial sum, in any order and any
    blocking (fused multiply-adds too), is the sum of a subset of those products, so it lies between
    sum_S min(0, x_lo w_oj, x_hi w_oj) and sum_S max(0, x_lo w_oj, x_hi w_oj) (after a ReLU, x_lo = 0: the
    positive or the negative weights times x_hi). While both stay below 2^24 in magnitude for every o, each
    partial sum is an integer a float32 holds exactly, so every addition is exact. The chunks' sums are then
    added in float64 (below 2^53): exact. Channels are taken greedily in order. None when no such plan exists
    (one channel alone past the limit, a grouped conv whose whole fan-in is past it, or more than MAX_CHUNKS
    chunks): the caller keeps the per-call path (``exact_product``)."""
    # bounds: _channel_bounds(codes, x_hi, x_lo), when the caller has them already
    up, dn = bounds if bounds is not None else _channel_bounds(codes, x_hi, -x_hi if x_lo is None else x_lo)

    def fits(u, d):
        return max(float(u.max()), -float(d.min())) < F32_LIMIT
    if up.numel() == 0:
        return None
    if groups != 1:
        return ((0, up.shape[1]),) if fits(up.sum(1), dn.sum(1)) else None
    chunks, start, n = [], 0, up.shape[1]
    while start < n:
        # the running bounds only grow (up >= 0, dn <= 0): the channels that fit are a prefix of what is left
        grow = torch.maximum(up[:, start:].cumsum(1).amax(0), (-dn[:, start:]).cumsum(1).amax(0))
        take = int((grow < F32_LIMIT).sum())
        if take == 0 or len(chunks) == MAX_CHUNKS:
            return None
        chunks.append((start, start + take))
        start += take
    return tuple(chunks) if len(chunks) <= MAX_CHUNKS else None


MAX_PLANS = 512             # plans kept: a search builds the same layer from the same record once per step
_PLANS = BoundedCache(MAX_PLANS)    # content of (codes, input range, groups, bias codes) -> _plan_of's answer


class TensorMemo:
    """tensor -> value while the tensor lives, by identity (a WeakKeyDictionary compares tensor keys with ==,
    which is elementwise)."""

    def __init__(self):
        self._d: dict[int, tuple] = {}

    def get(self, t: torch.Tensor, default=None):
        e = self._d.get(id(t))
        return e[1] if e is not None and e[0]() is t else default

    def put(self, t: torch.Tensor, value) -> None:
        k, d = id(t), self._d

        def gone(r, k=k, d=d):
            if k in d and d[k][0] is r:
                del d[k]
        d[k] = (weakref.ref(t, gone), value)

    def clear(self) -> None:
        self._d.clear()


def tensor_state(t: torch.Tensor | None) -> tuple:
    """What a cache keyed on a tensor compares: the tensor itself (by identity, see same_state), its version counter
    (in-place ops), and its storage, dtype, device and shape (``p.data = t``, ``model.half()`` swap the data of the
    same Parameter without bumping the version). Writes through ``p.data`` bump nothing and are not seen."""
    if t is None:
        return (None,)
    return (t, t._version, t.data_ptr(), t.dtype, t.device, tuple(t.shape))


def same_state(a: tuple, b: tuple) -> bool:
    """Two keys made of tensor_state parts and plain values are equal: tensors by identity, the rest by ==.
    (A plain loop: every kept plan, fold, code and scale is checked with this on every use; a generator inside
    all() took 3.7 us a check, the loop 2.5 us.)"""
    if len(a) != len(b):
        return False
    tensor = torch.Tensor
    for x, y in zip(a, b):
        if isinstance(x, tensor) or isinstance(y, tensor):
            if x is not y:
                return False
        elif not x == y:
            return False
    return True


_PLAN_OF_TENSOR = TensorMemo()
_F32_CODES = TensorMemo()


def f32_codes(codes: torch.Tensor) -> torch.Tensor:
    """The integer codes as float32 for the float32 conv, made once per codes tensor (variants of one search share
    their codes, variant.weight_codes) while it is unchanged: one float32 copy of the quantized weights, as the
    model holds its own. Read only."""
    if not KEEP_CONSTANTS:
        return codes.to(F32)
    got = _F32_CODES.get(codes)
    if got is None or not same_state(got[0], tensor_state(codes)):
        got = (tensor_state(codes), codes.to(F32))
        _F32_CODES.put(codes, got)
    return got[1]


def _plan_of(codes: torch.Tensor, x_range: tuple[int, int], groups: int, bias: torch.Tensor | None) -> tuple:
    """QuantLayer._planned's answer, (chunks or None, bias_in_f32, peak), looked up by the content of its
    inputs: every variant of a search rebuilds its layers from the same records, so the same codes."""
    def digest(t):
        return None if t is None else (t.dtype, tuple(t.shape),
                                       hashlib.sha1(t.detach().contiguous().numpy().tobytes()).digest())
    same = (*tensor_state(codes), tuple(x_range), groups, *tensor_state(bias))
    if KEEP_CONSTANTS:                # the same codes tensor (variant.weight_codes shares it): no hashing
        got = _PLAN_OF_TENSOR.get(codes)
        if got is not None and same_state(got[0], same):
            return got[1]
    key = (digest(codes), tuple(x_range), groups, digest(bias)) if KEEP_CONSTANTS else None
    hit = _PLANS.get(key) if key is not None else None
    if hit is not None:
        _PLAN_OF_TENSOR.put(codes, (same, hit))
        return hit
    x_lo, x_hi = x_range
    split = _split_bounds(codes, x_hi, x_lo, key[0]) if SPLIT_BOUNDS and key is not None else None
    up, dn = split if split is not None else _channel_bounds(codes, x_hi, x_lo)
    chunks = plan_chunks(codes, x_hi, groups, x_lo, bounds=(up, dn))
    rows = torch.maximum(up.sum(1), -dn.sum(1))           # the largest |partial sum| of output o
    b = bias.detach().to(F64).abs().reshape(-1) if bias is not None else torch.zeros(1, dtype=F64)
    total = float((rows + b).max()) if rows.numel() else 0.0
    bias_f32 = chunks is not None and len(chunks) == 1 and total < F32_LIMIT
    out = (chunks, bias_f32, total)
    if key is not None:
        _PLANS.put(key, out)
        _PLAN_OF_TENSOR.put(codes, (same, out))
    return out


def ascend_quant(x: torch.Tensor, scale_d: float, offset_d: int, bits: int) -> torch.Tensor:
    """AscendQuant as the TBE kernel computes it: fp32 input cast to fp16, x * fp16(1/scale_d) and + offset in fp16,
    rounded (half to even here; the cast's tie rule is not documented) and saturated. NaN becomes 0."""
    lo, hi = int_range(bits)
    h = x.to(F16)
    t = h * torch.tensor(1.0 / scale_d, dtype=F32).to(F16)
    t.add_(torch.tensor(float(offset_d), dtype=F16))       # in place on fresh tensors: the same ops, fewer passes
    q = t.to(F32).round_().clamp_(lo, hi)
    return q.nan_to_num_(nan=0.0)


# True: a layer's constant tensors (1 / scale_d, deq_scale) are made once and kept (read only); False: made on
# every call, as before (benchmarks compare the two).
KEEP_CONSTANTS = True
# True: a fake-quant call checks its kept plan, float32 codes and deq_scale with one key (QuantLayer._kept);
# False: three checks, as before (the benchmark compares the two).
ONE_KEY = True
# True: an INT8 layer's fake-quant call (no policy, one exact float32 matmul) takes QuantLayer._lean_run: what is
# constant per layer kept behind one plain-valued key, the kernels called directly; False: the general path, as
# before (q15b; the benchmark and tests compare the two).
LEAN_CALL = True


def reciprocal_scale(scale_d: float) -> torch.Tensor:
    """AMCT's AscendQuant ``scale`` attribute, 1.0 / scale_d (insert_quant_pass.py:76) on the record's float32
    scale_d, stored as a float32 ONNX constant. Kept per value (every layer call asks; read only: a new tensor
    each time cost a quarter of a small layer's quant step)."""
    return _reciprocal(float(scale_d)) if KEEP_CONSTANTS else _reciprocal.__wrapped__(float(scale_d))


@functools.lru_cache(maxsize=4096)
def _reciprocal(scale_d: float) -> torch.Tensor:
    return torch.tensor(1.0 / float(np.float32(scale_d)), dtype=F64).to(F32)


def amct_fake_quant(x: torch.Tensor, scale_d: float, offset_d: int, bits: int) -> torch.Tensor:
    """The integer codes of AMCT's fake-quant ONNX model (module/quant_module.py add_fakequant): Mul by the float32
    reciprocal scale, Round (half to even), Add offset, Clip -- the offset comes after the rounding, and the scale
    multiplies rather than divides (x / scale rounds differently near .5). NaN becomes 0."""
    lo, hi = int_range(bits)
    q = (x.to(F32) * reciprocal_scale(scale_d)).round_().add_(offset_d).clamp_(lo, hi)
    return q.nan_to_num_(nan=0.0)


@dataclass
class QuantLayer(LayerMode):
    """One INT8 (or what-if 4/16-bit) Conv1d/2d/3d, ConvTranspose2d, AvgPool2d (no weight: ``codes`` empty,
    ``scale_w`` [1.0]) or Linear; see the module docstring."""
    name: str
    geometry: ConvGeometry
    codes: torch.Tensor                  # int8 weight codes (int8, or int16 for a wider what-if)
    scale_w: torch.Tensor                # [C_out] or [1], float32
    scale_d: float
    offset_d: int
    act_bits: int = 8
    wts_bits: int = 8
    bias_codes: torch.Tensor | None = None   # int64 codes of bias / (scale_d * scale_w), [C_out]
    folded_bn: str = ""                  # the BatchNorm folded into the weights before quantization
    clip: tuple = (0.0, 0.0)             # the real range the activation codes cover
    overflow: list = field(default_factory=list)   # int32 accumulator overflows seen (message strings)
    requant_to: tuple | None = None      # (scale_d, offset_d, bits, relu) of the next INT8 layer: AscendRequant
    from_requant: bool = False           # the input is the previous layer's requantized codes
    bias: torch.Tensor | None = None     # the float32 bias, for a Linear AMCT sees as MatMul + Add (see run)
    in_scale: torch.Tensor | None = None  # DMQ's 1 / f: AMCT's Mul before the layer, in the input's dtype
    planned: ClassVar[bool] = True       # False: the per-call exact_product path only (tests, benchmarks)

    @property
    def op_type(self) -> str:
        return self.geometry.op_type

    @property
    def x_range(self) -> tuple[int, int]:
        """[min, max] of q - offset_d over every code the input quantizer can give (clamped to its range)."""
        lo, hi = int_range(self.act_bits)
        return int(lo - self.offset_d), int(hi - self.offset_d)

    @property
    def x_bound(self) -> int:
        """max |q - offset_d| over every code the input quantizer can give."""
        return int(max(abs(v) for v in self.x_range))

    def chunk_plan(self) -> tuple | None:
        """The layer's float32 chunk plan (``plan_chunks``), computed once from its codes and activation range and
        kept (recomputed only if the codes, offset or bit width change)."""
        return self._planned()[0]

    def _planned(self) -> tuple:
        """(chunks or None, bias_in_f32, peak): ``bias_in_f32`` when one float32 conv with the int32 bias added in
        it stays below 2^24 for every output (then its float32 result is exact); ``peak`` the largest |acc| any
        input can give (the int32 overflow check is skipped when it is <= 2^31 - 1)."""
        bias = self.bias_codes
        key = (*tensor_state(self.codes), self.offset_d, self.act_bits, *tensor_state(bias))
        cached = self.__dict__.get("_plan")
        if self.op_type in TRANSPOSED or self.op_type == "avg_pool2d":
            # the chunk plan cuts input channels along the weight's axis 1; these keep the per-call exact path
            return None, False, 0.0
        if cached is None or not same_state(cached[0], key):
            cached = (key, _plan_of(self.codes, self.x_range, self.geometry.groups, bias))
            self.__dict__["_plan"] = cached
        return cached[1]

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("_plan", None)
        d.pop("_deq", None)
        d.pop("_kept_state", None)
        d.pop("_lean_state", None)
        return d

    def __post_init__(self):
        self._planned()               # chosen when the variant is built, not per call

    @property
    def deq_scale(self) -> torch.Tensor:
        """scale_d * scale_w in float32 (AMCT's deq_scale); kept while scale_d and scale_w are unchanged (read
        only: callers compute new tensors from it)."""
        key = (self.scale_d, *tensor_state(self.scale_w))
        hit = self.__dict__.get("_deq")
        if hit is None or not same_state(hit[0], key) or not KEEP_CONSTANTS:
            hit = self.__dict__["_deq"] = (key, (torch.tensor(self.scale_d, dtype=F32) * self.scale_w).to(F32))
        return hit[1]

    def integer_input(self, x: torch.Tensor, device: bool) -> torch.Tensor:
        if device and self.act_bits <= 8 and not self.from_requant:
            return ascend_quant(x, self.scale_d, self.offset_d, self.act_bits)
        if self.from_requant:
            # after AscendRequant the input is (q - offset) * scale held in fp16 (11 bits for at most 2^8 steps):
            # dividing back recovers q exactly
            # (quantize(), in place on the fresh quotient)
            lo, hi = int_range(self.act_bits)
            q = (x.to(F32) / self.scale_d).add_(self.offset_d).round_().clamp_(lo, hi)
            return q.nan_to_num_(nan=0.0)
        return amct_fake_quant(x, self.scale_d, self.offset_d, self.act_bits)

    def accumulate(self, q: torch.Tensor, int_bias: bool = True) -> torch.Tensor:
        """Exact integer accumulation (the cube's int32), see ``exact_product`` and ``plan_chunks``. The activation
        offset is taken off the codes first, so zero padding stands for a real zero (Conv2D's offset_x). Returns
        float64."""
        return self._accumulate(q, int_bias)[0].to(F64)

    def _kept(self) -> tuple:
        """(``_planned()``, float32 codes, float32 bias codes flat or None, ``deq_scale``) -- what a fake-quant call
        reads -- behind ONE check of the tensors and numbers they come from (codes, bias codes, scale_w, scale_d,
        offset_d, act_bits: the union of the four keys each of them checks on its own; ONE_KEY False: each its
        own check, as before)."""
        key = (*tensor_state(self.codes), *tensor_state(self.bias_codes), *tensor_state(self.scale_w),
               self.scale_d, self.offset_d, self.act_bits) if ONE_KEY and KEEP_CONSTANTS else None
        hit = self.__dict__.get("_kept_state")
        if key is None or hit is None or not same_state(hit[0], key):
            b = self.bias_codes
            hit = (key, (self._planned(), f32_codes(self.codes), f32_codes(b).reshape(-1) if b is not None else None,
                         self.deq_scale))
            if key is not None:
                self.__dict__["_kept_state"] = hit
        return hit[1]

    def _accumulate(self, q: torch.Tensor, int_bias: bool = True, own: bool = False,
                    centered: bool = False, kept: tuple | None = None) -> tuple[torch.Tensor, bool]:
        """(the exact integer sums as float32 or float64, whether the int32 overflow check can be skipped).
        ``own``: q is integer_input's fresh, clamped codes (offset taken off in place, range not re-checked);
        ``centered``: the offset is off already (fused.codes); ``kept``: ``_kept()``, when the caller has it."""
        if self.planned and exact32_allowed():
            plan, bias_f32, peak = kept[0] if kept is not None else self._planned()
        else:
            plan, bias_f32, peak = None, False, 0.0
        if centered:
            xq = q
        else:
            xq = q.sub_(self.offset_d) if own and q.dtype == F32 else q - self.offset_d
        if plan is not None and xq.numel() and not own:
            lo, hi = torch.aminmax(xq)                # the plan's premise, checked (one pass; callers clamp)
            x_lo, x_hi = self.x_range
            if not (float(lo) >= x_lo and float(hi) <= x_hi):
                plan = None
        if not self.geometry.weighted:
            # AMCT's fake-quant AvgPool2d: the pool on the integer codes (offset off) in FP32, no weight, no
            # bias; the mean of integers is rounded once (insert_fakequant_avgpool2d / AveragePool on the codes)
            return self.geometry.apply(xq.to(F32), None), True
        if plan is None:
            acc = exact_product(self.geometry.apply, xq, self.codes, self.geometry.fan_in(self.codes))
        elif bias_f32:
            # one float32 conv, the int32 bias inside it: every partial sum below 2^24, the float32 result exact
            if kept is not None:
                return self.geometry.apply(xq.to(F32), kept[1], kept[2] if int_bias else None), True
            b = f32_codes(self.bias_codes).reshape(-1) if self.bias_codes is not None and int_bias else None
            return self.geometry.apply(xq.to(F32), f32_codes(self.codes), b), True
        else:
            acc = self.chunked(xq, plan)
        if self.bias_codes is not None and int_bias:
            bias = self.geometry.channel_view(self.bias_codes.to(F64), acc)
            acc = acc.add_(bias) if plan is not None else acc + bias
        return acc, plan is not None and peak <= INT32_MAX

    def chunked(self, xq: torch.Tensor, plan: tuple) -> torch.Tensor:
        """One float32 conv/matmul per chunk of input channels (``plan_chunks``), summed in float64: exact."""
        w = f32_codes(self.codes)
        if len(plan) == 1:
            return self.geometry.apply(xq.to(F32), w).to(F64)
        dim = -1 if self.op_type == "linear" else 1
        acc = None
        for c0, c1 in plan:
            part = self.geometry.apply(xq.narrow(dim, c0, c1 - c0).to(F32), w.narrow(1, c0, c1 - c0))
            acc = part.to(F64) if acc is None else acc.add_(part)      # float32 -> float64 exactly, in place
        return acc

    def _lean_key(self) -> tuple:
        """What _lean's constants come from, as plain values (compared with one tuple ==): each tensor's id,
        version, storage, dtype, device and shape (tensor_state's parts; the kept entry holds the tensors and an
        alias of each storage, so neither an id nor a data pointer can be reused while it is kept), and the
        numbers."""
        key = [self.scale_d, self.offset_d, self.act_bits, self.wts_bits, self.from_requant, self.planned]
        for t in (self.codes, self.bias_codes, self.scale_w, self.bias):
            key += (None,) if t is None else (id(t), t._version, t.data_ptr(), t.dtype, t.device, t.shape)
        return tuple(key)

    def _lean(self) -> tuple | None:
        """The constants of a fake-quant call on the exact one-matmul path, made once per (layer, values): (key,
        float reciprocal, offset, lo, hi, float32 codes, float32 int bias, deq_scale, float bias or None, labels,
        the tensors the key names, a Linear's int8 GEMM constants or None -- ``int_gemm.constants``); None when
        this layer takes the general path (no single exact float32 matmul, a transposed conv or pool, requantized
        input, constants the kernels cannot read)."""
        key = self._lean_key()
        hit = self.__dict__.get("_lean_state")
        if hit is not None and hit[0] == key:
            return hit
        lean = None
        plan, bias_f32, _ = self._planned()
        lo, hi = int_range(self.act_bits)
        deq, b = self.deq_scale, self.bias
        if self.planned and bias_f32 and plan is not None and self.geometry.weighted and not self.from_requant \
                and fused._usable(deq) and deq.dim() == 1 and deq.numel() in (1, self.codes.shape[0]) \
                and (b is None or (fused._usable(b) and b.dim() == 1 and b.numel() == self.codes.shape[0])):
            bits = f"int{self.act_bits}" if self.act_bits == self.wts_bits else f"a{self.act_bits}w{self.wts_bits}"
            label = f"AMCT fake-quant {bits}" + ("" if (self.act_bits, self.wts_bits) == (8, 8) else " (what-if)")
            bc = self.bias_codes
            lean = (key, float(reciprocal_scale(self.scale_d)), self.offset_d, lo, hi, f32_codes(self.codes),
                    f32_codes(bc).reshape(-1) if bc is not None else None, deq, b, bits,
                    (label, label + " + float bias (MatMul + Add)"),
                    tuple((t, t.detach()) for t in (self.codes, bc, self.scale_w, b) if t is not None),
                    int_gemm.constants(self.codes, bc, self.offset_d)
                    if self.op_type == "linear" and lo >= -128 and hi <= 127 else None)
        self.__dict__["_lean_state"] = lean if lean is not None else (key, None)
        return self.__dict__["_lean_state"]

    def _lean_run(self, x: torch.Tensor):
        """run()'s fake-quant branch on the exact one-matmul path, the same operations in the same order (codes
        kernel, one float32 matmul with the int32 bias inside, dequant kernel), with the per-layer constants from
        _lean; None when a condition of that path fails (then run() takes its general path)."""
        lean = self._lean()
        if lean[1] is None or not exact32_allowed():
            return None
        _, r, off, lo, hi, w32, b32, deq, bias, bits, labels, _, i8 = lean
        lib = fused.kernels() if fused.ENABLED else None
        if self.in_scale is not None:
            x = x.to(F32) * self.in_scale.to(F32)
        x = x.to(F32)
        if lib is None or x.numel() < fused.MIN_ELEMENTS or not fused._usable(x):
            return None
        linear = self.op_type == "linear"
        float_bias = linear and x.dim() != 2 and bias is not None
        ilib = int_gemm.kernels() if i8 is not None and x.numel() * i8[0].shape[1] >= int_gemm.MIN_MACS else None
        if ilib is not None:
            # the same integers through an int8 GEMM (int_gemm's docstring), then the same dequant
            wt, ib, corr = i8
            x2 = x.reshape(-1, x.shape[-1])
            acc = int_gemm.int_mm(int_gemm.codes_i8(ilib, x2, r, off, lo, hi), wt)
            y = int_gemm.dequant_i32(ilib, acc, corr if float_bias else ib, deq, bias if float_bias else None)
            return y.reshape(*x.shape[:-1], y.shape[-1]), F32, bits, labels[float_bias]
        q = fused._codes(lib, x, r, off, lo, hi)
        acc = self.geometry.apply(q, w32, None if float_bias else b32)
        axis = acc.dim() - 1 if linear else 1
        if acc.numel() < fused.MIN_ELEMENTS or not acc.is_contiguous():
            # a small or strided output (a Linear 768 -> 10 at batch 1): the general path's own dequant, which
            # takes the torch ops here -- the codes and matmul are not run twice
            y = fused.dequant(acc, deq, bias if float_bias else None, axis)
        else:
            y = fused._dequant(lib, acc, deq, bias if float_bias else None, axis)
        return y, F32, bits, labels[float_bias]

    def run(self, sim, module, forward, args, kwargs):
        x = args[0]
        device = sim.policy is not None and not sim.policy.fake_quant
        if LEAN_CALL and KEEP_CONSTANTS and not device:
            out = self._lean_run(x)
            if out is not None:
                return out
        io = sim.io_dtype(self.op_type, [x]) if device else F32
        if self.in_scale is not None:
            # the Mul AMCT puts before a balanced layer: FP32 in its fake-quant model; on the device a float op
            # under the policy (fp16 under force_fp16) before AscendQuant
            x = x.to(io) * self.in_scale.to(io)
        # A Linear on a tensor of rank != 2 exports as MatMul + Add(bias, .): AMCT's get_bias_for_matmul looks for
        # the bias at the Add's second input, finds the MatMul there, and leaves the bias in float -- it is added
        # after the dequant (hicann/amct utils/quant_node.py:425-450, optimizer/insert_bias_quant_pass.py:88-90)
        float_bias = self.op_type == "linear" and x.dim() != 2 and self.bias is not None
        kept = None
        if device or self.from_requant:
            acc, bounded = self._accumulate(self.integer_input(x, device), int_bias=not float_bias, own=True)
        else:
            # AMCT's fake-quant codes with the offset already off: one pass of fused.py's kernel (the same ops)
            lo, hi = int_range(self.act_bits)
            q = fused.codes(x.to(F32), reciprocal_scale(self.scale_d), self.offset_d, lo, hi)
            kept = self._kept()
            acc, bounded = self._accumulate(q, int_bias=not float_bias, own=True, centered=True, kept=kept)
        peak = 0.0
        if not bounded and acc.numel():
            lo, hi = torch.aminmax(acc)
            peak = max(-float(lo), float(hi))
        if peak > INT32_MAX:
            msg = f"{self.name}: int32 accumulator overflow (|acc| up to {peak:.3g} > 2^31-1)"
            sim.notes.append(msg)
            if msg not in self.overflow:
                self.overflow.append(msg)
        bits = f"int{self.act_bits}" if self.act_bits == self.wts_bits else f"a{self.act_bits}w{self.wts_bits}"
        what_if = "" if (self.act_bits, self.wts_bits) == (8, 8) else " (what-if)"
        if device and self.requant_to is not None and not float_bias:
            y = self.requantize(acc)
            kernel = f"AscendQuant fp16 + {bits} cube + AscendRequant{what_if}"
        elif not device:
            # AMCT's dequant Mul (and the float bias's Add) in one pass, in place on our acc (fused.py)
            axis = acc.dim() - 1 if self.op_type == "linear" else 1
            deq = kept[3] if kept is not None else self.deq_scale
            y = fused.dequant(acc.to(F32), deq, self.bias if float_bias else None, axis)
            kernel = f"AMCT fake-quant {bits}{what_if}"
            if float_bias:
                kernel += " + float bias (MatMul + Add)"
            return y, io, bits, kernel
        else:
            y = acc.to(F32).mul_(self.geometry.channel_view(self.deq_scale, acc))   # acc is ours: in place
            kernel = (f"AscendQuant fp16 + {bits} cube + AscendDequant{what_if}" if device
                      else f"AMCT fake-quant {bits}{what_if}")
        if float_bias:
            y = y.to(io) + self.bias.to(io)
            kernel += " + float bias (MatMul + Add)"
        return y.to(io), io, bits, kernel

    def requantize(self, acc: torch.Tensor) -> torch.Tensor:
        """AscendRequant (RequantFusionPass): int32 straight to the next layer's codes with one fp32 scale
        deq_scale / scale_next, offset added, ReLU as a clamp at the offset; returned as the real values those
        codes stand for (the next layer divides them back). No fp16 rounding between the two layers."""
        s_next, o_next, bits, relu = self.requant_to
        lo, hi = int_range(bits)
        req = self.geometry.channel_view(self.deq_scale / s_next, acc)
        q = acc.to(F32).mul_(req).add_(o_next).round_().clamp_(lo, hi)    # acc is ours: in place
        if relu:
            q.clamp_(min=o_next)
        return q.sub_(o_next).mul_(s_next)


@dataclass
class FloatConv(LayerMode):
    """A conv with weights other than its module's (a BatchNorm folded into it), under the policy."""
    name: str
    geometry: ConvGeometry
    weight: torch.Tensor                 # float32 (the fold is computed in FP32)
    bias: torch.Tensor | None
    folded_bn: str = ""
    by: str = "AMCT do_fusion"           # or "ATC ConvBatchnormFusionPass"

    @property
    def op_type(self) -> str:
        return self.geometry.op_type

    def run(self, sim, module, forward, args, kwargs):
        x = args[0]
        kernel = f"conv + {self.folded_bn} folded ({self.by})"
        if sim.policy is None:
            return self.geometry.apply(x.to(F32), self.weight, self.bias), F32, "float32", kernel
        tensors = (x, self.weight) + ((self.bias,) if self.bias is not None else ())

        def call(x, w, b=None):
            return self.geometry.apply(x, w, b)
        out, io, label, _ = sim.execute(self.op_type, call, tensors, {}, layer=self.name)
        return out, io, label, kernel


@dataclass
class FoldedBatchNorm(LayerMode):
    """A BatchNorm folded into the conv before it: it passes its input through."""
    into: str
    op_type: str = "batch_norm"

    def run(self, sim, module, forward, args, kwargs):
        x = args[0]
        return x, x.dtype, "-", f"folded into {self.into}"


@dataclass
class CalibLayer(LayerMode):
    """AMCT's calibration graph for one layer: FP32, fake-quantized (folded) weights; records the input."""
    name: str
    geometry: ConvGeometry
    weight: torch.Tensor                 # fake-quantized weight, float32
    bias: torch.Tensor | None
    inputs: list = field(default_factory=list)
    calls: int = 0
    in_scale: torch.Tensor | None = None   # DMQ's 1 / f (AMCT's Mul before the layer): the input calibrated
    in_divisor: torch.Tensor | None = None  # DMQ's f inside AMCT's AdaRound module (ADA + DMQ): x / f

    @property
    def op_type(self) -> str:
        return self.geometry.op_type

    def run(self, sim, module, forward, args, kwargs):
        x = args[0].to(F32)
        if self.in_scale is not None:
            x = x * self.in_scale
        if self.in_divisor is not None:
            x = x / self.in_divisor
        self.calls += 1
        self.inputs.append(x.detach().clone())
        return self.geometry.apply(x, self.weight, self.bias), F32, "float32", "AMCT calibration (fake-quant weights)"


def fold_bn(weight: torch.Tensor, bias: torch.Tensor | None, bn: nn.modules.batchnorm._BatchNorm):
    """Conv + BatchNorm folded in FP32 by the function AMCT's ConvBnFusionPass reaches through
    torch.quantization.fuse_modules (torch.nn.utils.fusion.fuse_conv_bn_weights): w' = w * (gamma * rsqrt(var +
    eps)), b' = (b - mean) * rsqrt(var + eps) * gamma + beta -- rsqrt, and this order of products, to the bit."""
    from torch.nn.utils.fusion import fuse_conv_bn_weights
    var, mean = bn.running_var.detach().to(F32), bn.running_mean.detach().to(F32)
    gamma = bn.weight.detach().to(F32) if bn.weight is not None else torch.ones_like(var)
    beta = bn.bias.detach().to(F32) if bn.bias is not None else torch.zeros_like(var)
    b = bias.detach().to(F32) if bias is not None else None
    w, fb = fuse_conv_bn_weights(weight.detach().to(F32), b, mean, var, bn.eps, gamma, beta)
    return w.detach(), fb.detach()


@dataclass
class QuantMatmul(LayerMode):
    """A function-level ``a @ b`` in INT8 (what-if: AMCT's PyTorch flow quantizes modules; its ONNX flow
    quantizes MatMul nodes): ``a`` asymmetric, ``b`` symmetric, both per tensor through AscendQuant, the cube's
    exact integer product, dequantized with scale_a * scale_b to the policy's I/O dtype."""
    name: str
    scale_a: float
    offset_a: int
    scale_b: float
    bits: int = 8
    op_type: str = "matmul"

    def run(self, sim, module, forward, args, kwargs):
        a, b = args[0], args[1]
        device = sim.policy is not None and not sim.policy.fake_quant
        io = sim.io_dtype("matmul", [a, b]) if device else F32
        if device:
            qa = ascend_quant(a, self.scale_a, self.offset_a, self.bits)
            qb = ascend_quant(b, self.scale_b, 0, self.bits)
        else:
            qa = torch.nan_to_num(quantize(a.to(F32), self.scale_a, self.offset_a, self.bits), nan=0.0)
            qb = torch.nan_to_num(quantize(b.to(F32), self.scale_b, 0, self.bits), nan=0.0)
        acc = exact_product(torch.matmul, qa - self.offset_a, qb, a.shape[-1])
        y = acc.to(F32) * torch.tensor(self.scale_a * self.scale_b, dtype=F32)
        kernel = ("AscendQuant fp16 x2 + int8 BatchMatMul + AscendDequant (what-if)" if device
                  else "AMCT-style fake-quant matmul (what-if)")
        return y.to(io), io, f"int{self.bits}", kernel


@dataclass
class CalibMatmul(LayerMode):
    """Calibration of a function-level matmul: records both operands, runs it in FP32."""
    name: str
    inputs: list = field(default_factory=list)
    op_type: str = "matmul"

    def run(self, sim, module, forward, args, kwargs):
        a, b = args[0].to(F32), args[1].to(F32)
        self.inputs.append((a.detach().clone(), b.detach().clone()))
        return torch.matmul(a, b), F32, "float32", "calibration"
