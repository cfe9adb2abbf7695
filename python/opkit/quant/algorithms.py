"""AMCT's post-training quantization arithmetic: ARQ (weights), IFMR and HFMG (activations), scale/offset.

Written from AMCT's open-source PyTorch implementation (hicann/amct, amct_pytorch/classic/graph_based/
amct_pytorch/custom_op/{arq,ifmr,hfmg}/*_impl.py and custom_op/utils.py) and its docs ("ARQ", "IFMR",
"HFMG", "Quantization Algorithm Principles", hiascend.com .../devaids/amct/atlasamct_16_0385..0390);
docs/quant.md lists what each function follows and where opkit's reading of the docs differs from the code.

One integer format for both schemes (AMCT's "unified" format): q = clamp(round(x / scale + offset), lo, hi)
with [lo, hi] = [-2^(b-1), 2^(b-1) - 1]; x ~ (q - offset) * scale. Symmetric: offset 0. Asymmetric: the range
is forced to contain zero, scale = (max - min) / (2^b - 1), offset = -2^(b-1) - round(min / scale).
``torch.round`` rounds half to even, as AMCT's PyTorch code does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .. import numerics
from . import fused

FLT_EPSILON = 1.192092896e-07       # AMCT utils/vars.py: a scale below this becomes 1.0
ACT_BITS = (4, 8, 16)               # AMCT config field.py: ACT_SUPPORT_NUM_BITS
WTS_BITS = (4, 6, 7, 8)             # AMCT config field.py: WTS_SUPPORT_NUM_BITS


def int_range(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def scale_offset(data_max: torch.Tensor, data_min: torch.Tensor, asymmetric: bool, bits: int):
    """Min-max scale and offset (AMCT ``calculate_scale_offset`` + ``process_scale``); tensors broadcast."""
    hi = torch.as_tensor(data_max, dtype=torch.float32)
    lo = torch.as_tensor(data_min, dtype=torch.float32)
    if asymmetric:
        hi, lo = hi.clamp(min=0), lo.clamp(max=0)            # the range must contain zero
        steps = (1 << bits) - 1
        scale = (hi - lo) / steps
        half = math.ceil(steps / 2)
        offset = torch.where(hi != lo, -half - lo / torch.where(scale > 0, scale, torch.ones_like(scale)),
                             torch.full_like(hi, -half))
        offset = torch.where(scale < FLT_EPSILON, torch.full_like(offset, -(1 << (bits - 1))), offset)
    else:
        # the side holding the larger magnitude gets the full half-range: 2^(b-1) steps when it is negative
        negative = hi.abs() < lo.abs()
        steps = torch.where(negative, torch.full_like(hi, 1 << (bits - 1)), torch.full_like(hi, (1 << (bits - 1)) - 1))
        scale = torch.maximum(hi.abs(), lo.abs()) / steps
        offset = torch.zeros_like(scale)
    scale = torch.where(scale < FLT_EPSILON, torch.ones_like(scale), scale)
    return scale.to(torch.float32), offset.round().to(torch.int32)


def quantize(x: torch.Tensor, scale, offset, bits: int) -> torch.Tensor:
    """Integer codes (held in x's float dtype): clamp(round(x / scale + offset))."""
    lo, hi = int_range(bits)
    return torch.clamp(torch.round(x / scale + offset), lo, hi)


def fake_quant(x: torch.Tensor, scale, offset, bits: int) -> torch.Tensor:
    """Quantize and dequantize: the value the integer code stands for."""
    return (quantize(x, scale, offset, bits) - offset) * scale


def _per_channel(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return t.reshape([-1] + [1] * (like.dim() - 1)) if t.numel() > 1 else t.reshape([])


# -- weights: ARQ ---------------------------------------------------------------------------------------------

@dataclass
class WeightQuant:
    scale: torch.Tensor          # [C_out] (channel_wise) or [1]
    offset: torch.Tensor         # zeros, same shape (weights are symmetric)
    codes: torch.Tensor          # integer codes, float32, the weight's shape


def arq(weight: torch.Tensor, bits: int = 8, channel_wise: bool = True) -> WeightQuant:
    """ARQ: symmetric, one scale per output channel (axis 0) or per layer, from the weight's range."""
    w = weight.detach().to(torch.float32)
    if not torch.isfinite(w).all():
        raise ValueError("the weight to be quantized holds inf or NaN")
    flat = w.reshape(w.shape[0], -1)
    if channel_wise:
        hi, lo = flat.max(dim=1).values, flat.min(dim=1).values
    else:
        hi, lo = flat.max().reshape(1), flat.min().reshape(1)
    scale, offset = scale_offset(hi, lo, False, bits)
    codes = quantize(w, _per_channel(scale, w), _per_channel(offset.float(), w), bits)
    return WeightQuant(scale, offset, codes)


# -- activations: IFMR ----------------------------------------------------------------------------------------

@dataclass
class ActQuant:
    scale: float
    offset: int
    clip_min: float              # the real range the integer grid covers
    clip_max: float
    init_min: float              # the percentile bounds the search started from (IFMR) / data range (HFMG)
    init_max: float
    algo: str


def _clip_range(scale: float, offset: int, bits: int) -> tuple[float, float]:
    lo, hi = int_range(bits)
    return (lo - offset) * scale, (hi - offset) * scale


def percentile_bounds(data: torch.Tensor, max_percentile: float, min_percentile: float) -> tuple[float, float]:
    """IFMR's starting bounds: the k-th largest and k-th smallest value, k = n - int(percentile * n) (1 when the
    percentile is 1), then widened to contain zero."""
    n = data.numel()
    k_max = 1 if (1.0 - max_percentile) < FLT_EPSILON else n - int(max_percentile * n)
    k_min = 1 if (1.0 - min_percentile) < FLT_EPSILON else n - int(min_percentile * n)
    hi = float(torch.topk(data, max(k_max, 1), largest=True).values[-1])
    lo = float(torch.topk(data, max(k_min, 1), largest=False).values[-1])
    return max(0.0, hi), min(0.0, lo)


def ifmr(data: torch.Tensor, bits: int = 8, with_offset: bool = True, max_percentile: float = 0.999999,
         min_percentile: float = 0.999999, search_range: tuple[float, float] = (0.7, 1.3),
         search_step: float = 0.01) -> ActQuant:
    """IFMR: start from the percentile bounds, try clip_max = ratio * bound for ratio in
    arange(start, end, step) (end excluded, as torch.arange), keep the one whose clip-and-round error (MSE
    against the data) is smallest. The lower clip stays at the percentile minimum (asymmetric) or at
    -clip_max (symmetric); only the upper bound is searched, as AMCT's code does."""
    x = data.detach().reshape(-1).to(torch.float32)
    if x.numel() == 0:
        raise ValueError("no calibration data reached this layer")
    if not torch.isfinite(x).all():
        raise ValueError("the calibration activations hold inf or NaN")
    top, bottom = percentile_bounds(x, max_percentile, min_percentile)
    ratios = torch.arange(search_range[0], search_range[1], search_step, dtype=torch.float32)
    if with_offset:
        candidates = ratios * top
        scales = (candidates - bottom) / ((1 << bits) - 1)
    else:
        negative = abs(top) < abs(bottom)
        bound = max(abs(top), abs(bottom))
        candidates = ratios * bound
        scales = candidates / ((1 << (bits - 1)) if negative else (1 << (bits - 1)) - 1)
    scales = torch.where(scales < FLT_EPSILON, torch.ones_like(scales), scales)
    lows = [bottom] * len(candidates) if with_offset else [-c for c in candidates.tolist()]
    best = _ifmr_best(x, lows, candidates, scales)
    scale = float(scales[best])
    offset = 0
    if with_offset:   # float32 division and half-to-even rounding, as AMCT's tensors do
        q = torch.tensor(bottom, dtype=torch.float32) / scales[best]
        offset = int(-torch.round(q).item() - (1 << (bits - 1)))
    cmin, cmax = _clip_range(scale, offset, bits)
    return ActQuant(scale, offset, cmin, cmax, bottom, top, "ifmr")


IFMR_ROWS_ELEMENTS = 1 << 16     # candidates searched side by side while they fit this many elements (L2-sized)
IFMR_FUSED = True                # the squared errors by quant/fused.py's kernel (False: the torch ops below)
IFMR_FUSED_ELEMENTS = 1 << 18    # the kernel's candidates per block (float32 errors + their float64 copy: 3 MB)


def _skip_margin(n: int) -> float:
    """r of _ifmr_best for n elements (a function of its own so the tests can show a smaller one fails)."""
    return 8.0 * n * 2.0 ** -53 + 2.0 ** -48


IFMR_BOUND = True    # skip candidates that provably cannot win before their exact losses (False: every loss computed)


def _ifmr_best(x: torch.Tensor, lows: list[float], cands: torch.Tensor, scales: torch.Tensor) -> int:
    """``int(np.argmin(_mse_losses(...)))`` -- the same index, ties to the first -- with the exact loss (NumPy's
    float64 pairwise mean, ``_mse_losses``) computed only for the candidates that can still win.

    Why it is the same index. Candidate j's squared errors e_i >= 0 are float32 values, exact in float64; S_j their
    exact sum. Any float64 summation of n non-negative terms, in any order, lies within gamma * S_j of S_j,
    gamma = (n-1)u / (1-(n-1)u), u = 2^-53 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
    eq. 4.4 with |x_i| = x_i); both the kernel's sum T_j (fused.ifmr_sums, the same e_i bits) and NumPy's P_j are
    such sums, so P_j lies in [T_j (1-g)/(1+g), T_j (1+g)/(1-g)]. The loss is fl(P_j / n), monotone in P_j, and
    P_j >= P_k (1 + 2^-50) makes fl(P_j / n) > fl(P_k / n) strictly. With r = 8 n u + 2^-48 (above 2g + 2^-50 +
    the rounding of the two products below while n u < 2^-10): T_j (1-r) > min_k T_k (1+r) means candidate j's
    loss is strictly above some other candidate's, so it is neither the minimum nor the first of a tie -- skipped.
    Every other candidate gets its exact loss and the first minimum among them is argmin's answer, because each
    skipped one is strictly above it. No bound (every loss computed) when the kernel is off, n u >= 2^-10, or a
    sum is not finite (an overflowing error: inf ties, which the exact path orders as argmin does)."""
    n = x.numel()
    sums = None
    if IFMR_BOUND and IFMR_FUSED and x.is_contiguous() and 0 < n < (1 << 43):
        sums = fused.ifmr_sums(x, torch.tensor(lows, dtype=torch.float32), cands.to(torch.float32).contiguous(),
                               scales.to(torch.float32).contiguous())
    if sums is None or not all(math.isfinite(v) for v in sums):
        return int(np.argmin(_mse_losses(x, lows, cands, scales)))
    r = _skip_margin(n)
    ceiling = min(sums) * (1.0 + r)
    keep = [j for j, t in enumerate(sums) if not t * (1.0 - r) > ceiling]
    if len(keep) == len(sums):
        return int(np.argmin(_mse_losses(x, lows, cands, scales)))
    idx = torch.tensor(keep)
    losses = _mse_losses(x, [lows[j] for j in keep], cands[idx], scales[idx])
    return keep[int(np.argmin(losses))]


ROW_MEANS = True     # numerics.mean of every row of a block in one NumPy reduce, once checked equal (False: row by row)
_row_reduce_ok: list = []


def _row_means(e: torch.Tensor) -> list[float]:
    """``[numerics.mean(row) for row in e]`` for a 2-D float32 block: one float64 conversion and one
    ``np.add.reduce(axis=1)`` instead of one of each per row -- NumPy hands the inner loop each contiguous row
    whole, so each row is summed by the same pairwise routine as the 1-D reduce. Checked, not assumed: the first
    call compares both on rows of 1..70,000 elements (every branch of the pairwise blocking) and keeps the row by
    row path if any sum differs."""
    if not ROW_MEANS or not _row_reduce_agrees():
        return [numerics.mean(e[r]) for r in range(len(e))]
    n = e.shape[1]
    if n == 0:
        return [math.nan] * len(e)
    # float32 -> float64 is exact either way; NumPy's astype converts 2.5x faster than torch's .to here
    sums = np.add.reduce(e.detach().contiguous().numpy().astype(np.float64), axis=1)
    return [float(v) / n for v in sums.tolist()]


def _row_reduce_agrees() -> bool:
    if not _row_reduce_ok:
        g = torch.Generator().manual_seed(11)
        ok = True
        for n in (1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 8191, 8192, 8193, 16385, 40000, 70000):
            e = (torch.randn(3, n, generator=g) * torch.tensor([1e-3, 1.0, 1e3])[:, None]) ** 2
            sums = np.add.reduce(e.numpy().astype(np.float64), axis=1)
            ok = ok and all(float(sums[r]) / n == numerics.mean(e[r]) for r in range(3))
        _row_reduce_ok.append(ok)
    return _row_reduce_ok[0]


def _mse_losses(x: torch.Tensor, lows: list[float], cands: torch.Tensor, scales: torch.Tensor) -> list[float]:
    """mean((round(clamp(x, low, cand) / s) * s - x)^2) per candidate, as float. The squared errors are AMCT's
    elementwise float32 operations (each IEEE-rounded, so the same bits on every CPU); their mean is
    opkit.numerics.mean (float64, NumPy's fixed pairwise order) rather than AMCT's float32 torch mean, whose bits
    depend on the CPU's vector width and the thread count (measured: ATEN_CPU_CAPABILITY=default/avx2/avx512 and
    1 vs 2 threads give different float32 means), so that the winning candidate is the same on every host.
    The two means differ by a few float32 ulps at most: they pick different candidates only on a near-tie,
    which AMCT's own answer flips on between hosts too (tests/test_quant_host_independent.py).
    A small input runs several candidates as rows of one tensor (a few large ops instead of six small ones per
    candidate); each row is a contiguous vector, the same values as one candidate at a time
    (tests/test_quant_fixed_cost.py compares both bit for bit)."""
    n, k = x.numel(), len(lows)
    if IFMR_FUSED and x.is_contiguous():
        # the same float32 operations per element fused into one pass (quant/fused.py, self-checked bit for bit)
        lo = torch.tensor(lows, dtype=torch.float32)
        hi, sc = cands.to(torch.float32).contiguous(), scales.to(torch.float32).contiguous()
        step = max(1, min(k, IFMR_FUSED_ELEMENTS // max(n, 1)))
        out = []
        for i in range(0, k, step):
            e = fused.ifmr_sq(x, lo[i:i + step], hi[i:i + step], sc[i:i + step])
            if e is None:
                break
            out.extend(_row_means(e))
        if len(out) == k:
            return out
    rows = min(k, IFMR_ROWS_ELEMENTS // max(n, 1))
    if rows < 2:
        out, err = [], torch.empty_like(x)          # one buffer, the same ops in place
        for low, cand, s in zip(lows, cands.tolist(), scales.tolist()):
            torch.clamp(x, low, cand, out=err)
            err.div_(s).round_().mul_(s).sub_(x)      # round(clamp(x) / s) * s - x
            out.append(numerics.mean(err.mul_(err)))
        return out
    lo = torch.tensor(lows, dtype=torch.float32)[:, None]
    hi, sc = cands.to(torch.float32)[:, None], scales.to(torch.float32)[:, None]
    out, buf = [], torch.empty(rows, n, dtype=torch.float32)
    for i in range(0, k, rows):
        j = min(k, i + rows)
        e = buf[:j - i]
        torch.clamp(x.expand(j - i, n), lo[i:j], hi[i:j], out=e)
        e.div_(sc[i:j]).round_().mul_(sc[i:j]).sub_(x).mul_(e)
        out.extend(numerics.mean(e[r]) for r in range(j - i))
    return out


# -- activations: HFMG ----------------------------------------------------------------------------------------

HFMG_STEP_DIVISOR = 100000      # AMCT utils/vars.py STEP_DIVISOR: the search trims ceil(total / 1e5) samples a step
HFMG_MIN_BIN_RATIO = 4          # AMCT MIN_BIN_RATIO: stop when the kept range is at most nbins / 4 bins wide


class Histogram:
    """HFMG's running histogram over calibration batches: each batch is binned over the range seen so far;
    an older histogram is re-binned into a wider range assuming its samples are uniform inside each bin
    (a bin's count is split between the two new bins it straddles, the lower part truncated to an integer)."""

    def __init__(self, nbins: int = 4096):
        self.nbins = nbins
        self.counts: np.ndarray | None = None
        self.lo = self.hi = 0.0

    def add(self, data: torch.Tensor) -> None:
        x = data.detach().reshape(-1).to(torch.float32)
        if not torch.isfinite(x).all():
            raise ValueError("the calibration activations hold inf or NaN")
        lo, hi = float(x.min()), float(x.max())
        if self.counts is None:
            self.lo, self.hi = lo, hi
            self.counts = torch.histc(x, self.nbins, min=lo, max=hi).double().numpy()
            return
        new_lo, new_hi = min(lo, self.lo), max(hi, self.hi)
        merged = torch.histc(x, self.nbins, min=new_lo, max=new_hi).double().numpy()
        if math.isclose(new_lo, self.lo, abs_tol=FLT_EPSILON) and math.isclose(new_hi, self.hi, abs_tol=FLT_EPSILON):
            merged += self.counts
        else:
            width = (new_hi - new_lo) / self.nbins
            old_w = (self.hi - self.lo) / self.nbins
            edges = self.lo + old_w * np.arange(self.nbins + 1)
            i_lo = np.floor((edges[:-1] - new_lo) / width).astype(np.int64)
            i_hi = np.minimum(np.floor((edges[1:] - new_lo) / width).astype(np.int64), self.nbins - 1)
            i_lo = np.minimum(i_lo, self.nbins - 1)
            share = np.where(i_lo == i_hi, 1.0, (new_lo + (i_lo + 1) * width - edges[:-1]) / old_w)
            low_part = np.trunc(self.counts * share)
            np.add.at(merged, i_lo, low_part)
            np.add.at(merged, i_hi, self.counts - low_part)
        self.counts, self.lo, self.hi = merged, new_lo, new_hi


def hfmg_candidates(counts: np.ndarray) -> list[tuple[int, int]]:
    """Bin ranges [left, right] HFMG tries: from the full range, trim ~total/1e5 samples at a time from the
    side that loses fewer bins doing so, until the range is at most nbins/4 bins wide (the full range itself
    is not a candidate)."""
    n = len(counts)
    left, right = 0, n - 1
    step = max(math.ceil(float(counts.sum()) / HFMG_STEP_DIVISOR), 1)
    min_bins = math.ceil(n / HFMG_MIN_BIN_RATIO)
    out = []
    while right - left > min_bins:
        tl, tr, ls, rs = left, right, 0.0, 0.0
        while tl < tr and ls < step:
            ls += counts[tl]
            tl += 1
        while tl < tr and rs < step:
            rs += counts[tr]
            tr -= 1
        if (right - tr) >= (tl - left):
            right = tr
        else:
            left = tl
        out.append((left, right))
    return out


def _cube_integral(a, b, density):
    return (b * b * b - a * a * a) * (density / 3.0)


def hfmg_losses(counts: np.ndarray, lo: float, hi: float, bits: int, candidates: list[tuple[int, int]],
                chunk: int = 128) -> np.ndarray:
    """L2 error of representing the histogram with 2^bits equal bins spanning each candidate range: samples are
    spread uniformly in their source bin, each lands on the centre of its destination bin (bins outside the
    range fall on the first/last destination bin). Float64, candidates in chunks (the matrix is bins x chunk)."""
    n = len(counts)
    width = (hi - lo) / n
    if not candidates or width <= 0:
        return np.zeros(len(candidates))
    dst = float(1 << bits)
    keep = np.nonzero(counts)[0]                                   # empty source bins add nothing
    density = torch.from_numpy(counts[keep] / width)[:, None]
    idx = torch.from_numpy(keep.astype(np.float64))[:, None]
    out = []
    for i in range(0, len(candidates), chunk):
        cand = torch.tensor(candidates[i:i + chunk], dtype=torch.float64)
        left, right = cand[:, 0][None, :], cand[:, 1][None, :]
        dst_w = width * (right - left + 1) / dst                   # [1, k]
        begin = (idx - left) * width                               # [bins, k]
        end = begin + width
        b_idx = torch.floor(begin / dst_w).clamp(0, dst - 1)
        e_idx = torch.floor(end / dst_w).clamp(0, dst - 1)
        half = dst_w / 2
        d0 = begin - (b_idx * dst_w + half)                        # offsets from the destination bins' centres
        d1 = end - (e_idx * dst_w + half)
        same = b_idx == e_idx
        inside = _cube_integral(d0, d1 + (b_idx - e_idx) * dst_w, density)
        split = (_cube_integral(d0, half, density) + (e_idx - b_idx - 1) * _cube_integral(-half, half, density)
                 + _cube_integral(-half, d1, density))
        loss = torch.where(same, inside, split).sum(dim=0)
        out.append(torch.where(dst_w[0] < FLT_EPSILON, torch.zeros_like(loss), loss))
    return torch.cat(out).numpy()


def hfmg(hist: Histogram, bits: int = 8, with_offset: bool = True) -> ActQuant:
    """HFMG: the candidate range with the smallest histogram L2 error, then min-max scale/offset on it."""
    if hist.counts is None:
        raise ValueError("no calibration data reached this layer")
    cands = hfmg_candidates(hist.counts)
    if cands:
        left, right = cands[int(np.argmin(hfmg_losses(hist.counts, hist.lo, hist.hi, bits, cands)))]
    else:
        left, right = 0, hist.nbins - 1
    # the clip bounds in float32 tensor arithmetic, as AMCT's hfmg_compute (hfmg_impl.py:273-276) on its float32
    # histogram range: a float64 computation rounds differently in the last bit of scale_d
    lo32, hi32 = torch.tensor(hist.lo, dtype=torch.float32), torch.tensor(hist.hi, dtype=torch.float32)
    width = (hi32 - lo32) / hist.nbins
    cmin, cmax = lo32 + left * width, lo32 + (right + 1) * width
    scale, offset = scale_offset(cmax, cmin, with_offset, bits)
    s, o = float(scale), int(offset)
    qmin, qmax = _clip_range(s, o, bits)
    return ActQuant(s, o, qmin, qmax, hist.lo, hist.hi, "hfmg")
