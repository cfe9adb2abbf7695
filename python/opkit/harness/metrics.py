"""Error metrics of one output tensor against its golden, and the verdict of the standard.

Everything is computed in float64 on CPU over the finite elements (sums through opkit.numerics, so the
figures do not depend on the machine's BLAS or vector width), with ``abs_err = |out - gold|`` and
``rel_err = abs_err / (|gold| + 1e-7)``. METRICS is the one list of what a case reports: compare() fills
it, the HTML report takes its columns from it, and docs/harness.md's metric table is its ``markdown()``
(a test keeps them equal). The verdict's rules are in standard.py; docs/accuracy-standard.md has sources.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from .. import numerics
from ..opspec.standard import REL_EPS, Thresholds

# torch.testing.assert_close defaults (torch/testing/_comparison.py), by output dtype.
ASSERT_CLOSE_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                    "float64": (1e-7, 1e-7)}


@dataclass(frozen=True)
class Metric:
    key: str                  # key in the case record's ``metrics``
    label: str                # column of the HTML report ("" = not a column)
    doc: str
    gating: bool = False      # part of the verdict (else reported only)
    baseline: bool = False    # an error metric the baseline gate keeps from growing (opkit test --baseline)
    stat: Callable | None = None   # _Finite -> value, for the plain statistics of the finite elements


class _Finite:
    """The finite elements of one comparison (float64): out, golden, their difference and errors."""

    def __init__(self, o_f: torch.Tensor, g_f: torch.Tensor):
        self.o, self.g = o_f, g_f
        self.diff = o_f - g_f
        self.err = self.diff.abs()
        self.ga = g_f.abs()
        self.rel = self.err / (self.ga + REL_EPS)
        self.n = o_f.numel()




METRICS: tuple[Metric, ...] = (
    Metric("mere", "MERE", "mean rel_err over the elements judged relatively (neither cancelled nor small)",
           gating=True, baseline=True),
    Metric("mare", "MARE", "max rel_err over the same elements", gating=True, baseline=True),
    Metric("max_abs_err", "max abs", "max abs_err", stat=lambda f: float(f.err.max())),
    Metric("max_rel_err", "max rel", "max rel_err", stat=lambda f: float(f.rel.max()), baseline=True),
    Metric("rmse", "RMSE", "root mean square of abs_err",
           stat=lambda f: numerics.rms(f.err)),
    Metric("cosine", "cosine", "cosine similarity of out and golden (exactly 1 when equal or both zero)",
           stat=lambda f: numerics.cosine(f.o, f.g)),
    Metric("thousandth", "1/1000", "share of elements with rel_err < 0.001 (msprobe's one-thousandth ratio)",
           stat=lambda f: int((f.rel < 1e-3).sum()) / f.n),
    Metric("five_thousandth", "", "share of elements with rel_err < 0.005",
           stat=lambda f: int((f.rel < 5e-3).sum()) / f.n),
    Metric("eb", "", "error balance: abs(#over - #under) / n (a biased kernel has eb near 1)",
           stat=lambda f: abs(float(torch.sign(f.diff).sum())) / f.n),
    Metric("assert_close", "assert_close", "the verdict torch.testing.assert_close would give with PyTorch's "
           "default tolerances for the output dtype, against the fp64 golden"),
    Metric("nonfinite_mismatch", "", "elements whose NaN/+-inf differs from the golden rounded to the output "
           "dtype", gating=True),
    Metric("cancelled", "cancelled", "elements judged by the cancellation rule", gating=True),
    Metric("small", "small", "elements judged in the small-value domain (abs(golden) <= S)", gating=True),
    Metric("judged_relative", "", "elements judged by MERE/MARE"),
    Metric("worst", "", "the worst element by its rule: index, out, golden, rule"),
)
STATS = tuple(m for m in METRICS if m.stat is not None)


def markdown() -> str:
    """The metric table of docs/harness.md."""
    rows = ["| metric | gating | meaning |", "|---|---|---|"]
    rows += [f"| `{m.key}` | {'yes' if m.gating else ''} | {m.doc} |" for m in METRICS]
    return "\n".join(rows)


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _index(flat_i: int, shape) -> list[int]:
    idx = []
    for d in reversed(list(shape)):
        idx.append(flat_i % d if d else 0)
        flat_i = flat_i // d if d else 0
    return list(reversed(idx))



def compare(out: torch.Tensor, gold: torch.Tensor, thr: Thresholds,
            scale: torch.Tensor | None = None) -> dict:
    """All metrics of ``out`` against ``gold`` plus the verdict: {"passed", "reason", ...metrics}."""
    if tuple(out.shape) != tuple(gold.shape):
        return {"passed": False, "reason": f"shape {list(out.shape)} != golden shape {list(gold.shape)}",
                "numel": out.numel()}
    if thr.standard == "bit_exact" or not out.is_floating_point():
        return _bit_exact(out, gold)
    o = out.detach().to(torch.float64).reshape(-1)
    g64 = gold.detach().to(torch.float64).reshape(-1)
    res: dict = {"numel": o.numel()}
    finite, mismatch, g_cast = _nonfinite(out, gold, o, res, thr, scale)
    f = _Finite(o, g64) if finite is None else _Finite(o[finite], g64[finite])
    res["finite"] = f.n
    for m in STATS:
        res[m.key] = m.stat(f) if f.n else None
    cancelled, small = _partition(f, thr, scale, finite, res)
    if f.n:
        res["worst"] = _worst(f, thr, cancelled, small, finite, o, g64, out.shape, res)
    res["assert_close"] = _assert_close(_dtype_name(out), f, finite, o, g64)
    reason = _verdict(res, thr, mismatch, o, g_cast, out.shape)
    res["passed"] = not reason
    res["reason"] = reason
    return res


def _nonfinite(out, gold, o, res, thr: Thresholds, scale):
    """NaN/Inf check against the golden rounded into the output dtype: a value beyond the dtype's range must
    come out as +-inf (IEEE overflow), one inside it must stay finite -- except at the overflow edge: where
    the exact value is within its own error bound (T*|gold|, plus K*u_c*scale when an error scale is given)
    of the rounding-to-inf point, a correct result may round either way, so +-inf of the right sign and a
    finite value within that bound both pass. Returns (finite mask or None when all is finite, mismatch
    mask, rounded golden)."""
    g_cast = gold.detach().to(out.dtype).to(torch.float64).reshape(-1)
    o_fin, g_fin = torch.isfinite(o), torch.isfinite(g_cast)
    if bool(o_fin.all()) and bool(g_fin.all()):
        res["golden_nonfinite"] = res["nonfinite_mismatch"] = 0
        return None, None, g_cast
    o_nan, g_nan = torch.isnan(o), torch.isnan(g_cast)
    o_inf, g_inf = torch.isinf(o), torch.isinf(g_cast)
    mismatch = (o_nan != g_nan) | (o_inf != g_inf) | (o_inf & g_inf & (torch.sign(o) != torch.sign(g_cast)))
    g64 = gold.detach().to(torch.float64).reshape(-1)
    fi = torch.finfo(out.dtype)
    edge = fi.max + 2.0 ** math.floor(math.log2(fi.max)) * fi.eps / 2   # largest finite + half its ulp
    bound = thr.threshold * g64.abs()
    if scale is not None:
        s = torch.nan_to_num(scale.detach().to(torch.float64).reshape(-1).abs(), nan=0.0, posinf=0.0)
        bound = bound + thr.cancel_k * thr.compute_unit * s
    at_edge = torch.isfinite(g64) & ((g64.abs() - edge).abs() <= bound)
    right = (o_inf & (torch.sign(o) == torch.sign(g64))) | (o_fin & ((o - g64).abs() <= bound))
    mismatch &= ~(at_edge & right)
    res["golden_nonfinite"] = int((~g_fin).sum())
    res["nonfinite_mismatch"] = int(mismatch.sum())
    return o_fin & g_fin & torch.isfinite(g64), mismatch, g_cast


def _partition(f: _Finite, thr: Thresholds, scale, finite, res):
    """Split the finite elements: cancelled (judged on the error scale), small (absolute), relative; fill
    mere/mare and the violation counts. Returns the (cancelled, small) masks."""
    ga, err, rel, nf = f.ga, f.err, f.rel, f.n
    if scale is not None:
        s = scale.detach().to(torch.float64).reshape(-1)
        if finite is not None:
            s = s[finite]
        s = torch.maximum(torch.nan_to_num(s.abs(), nan=0.0, posinf=0.0), ga)   # terms >= their sum
        unavoidable = (thr.cancel_k * thr.compute_unit) * s                     # E_i of standard.py
        budget = thr.threshold * ga
        cancelled = unavoidable > budget
        # A cancelled element that is also in the small-value domain may use the larger of the two
        # bounds: near zero (fp16 subnormals, fp32 underflow) the output's own rounding is absolute.
        bound = torch.where(ga <= thr.small_value,
                            torch.clamp_min(budget + unavoidable, thr.small_atol), budget + unavoidable)
    else:
        cancelled = torch.zeros_like(ga, dtype=torch.bool)
        bound = thr.threshold * ga
    small = ~cancelled & (ga <= thr.small_value)
    n_cancel, n_small = int(cancelled.sum()), int(small.sum())
    res["cancelled"], res["small"] = n_cancel, n_small
    res["judged_relative"] = nf - n_cancel - n_small
    res["cancelled_violations"] = int((cancelled & (err > bound)).sum()) if n_cancel else 0
    res["small_violations"] = int((small & (err > thr.small_atol)).sum()) if n_small else 0
    res["cancelled_max_err_over_bound"] = float((err[cancelled] / bound[cancelled]).max()) if n_cancel else None
    if res["judged_relative"]:
        r = rel if n_cancel == 0 and n_small == 0 else rel[~cancelled & ~small]
        res["mere"] = numerics.mean(r)
        res["mare"] = float(r.max())
    else:
        res["mere"] = res["mare"] = 0.0 if nf else None
    f.bound = bound
    return cancelled, small


def _worst(f: _Finite, thr, cancelled, small, finite, o, g64, shape, res) -> dict:
    """The worst element by its judged measure (relative to the MARE limit, the cancellation bound, or A)."""
    ratio = f.rel / (thr.mare_ratio * thr.threshold)
    if res["cancelled"]:
        ratio = torch.where(cancelled, f.err / f.bound.clamp_min(1e-300), ratio)
    if res["small"]:
        ratio = torch.where(small, f.err / thr.small_atol, ratio)
    w = int(torch.argmax(ratio))
    flat = w if finite is None else int(torch.nonzero(finite).reshape(-1)[w])
    rule = ("cancelled" if res["cancelled"] and bool(cancelled[w]) else
            "small" if res["small"] and bool(small[w]) else "relative")
    return {"index": _index(flat, shape), "out": float(o[flat]), "golden": float(g64[flat]), "rule": rule}


def _assert_close(out_dtype: str, f: _Finite, finite, o, g64) -> bool:
    """torch.testing.assert_close's rule with its defaults (equal_nan=False; +-inf equal only to itself),
    computed here directly: the library call costs a DTensor import and a full message format."""
    rtol, atol = ASSERT_CLOSE_TOL.get(out_dtype, (0.0, 0.0))
    if finite is None:
        return bool((f.err <= atol + rtol * f.ga).all())
    both_inf = torch.isinf(o) & (o == g64)
    return bool((((o - g64).abs() <= atol + rtol * g64.abs()) | both_inf).all())


def _verdict(res: dict, thr: Thresholds, mismatch, o, g_cast, shape) -> str:
    """The first failing rule (most fundamental first), or "" when the case passes."""
    reason = ""
    if res["nonfinite_mismatch"]:
        i = int(torch.nonzero(mismatch).reshape(-1)[0])
        return (f"NaN/Inf mismatch at {res['nonfinite_mismatch']} element(s), first {_index(i, shape)}: "
                f"got {float(o[i])}, golden {float(g_cast[i])}")
    if res["mere"] is not None and res["mere"] >= thr.threshold:
        reason = f"MERE {res['mere']:.3g} >= T {thr.threshold:.3g}"
    elif res["mare"] is not None and res["mare"] >= thr.mare_ratio * thr.threshold:
        reason = f"MARE {res['mare']:.3g} >= {thr.mare_ratio:g}T {thr.mare_ratio * thr.threshold:.3g}"
    elif res["cancelled_violations"]:
        reason = (f"{res['cancelled_violations']} cancelled element(s) with |err| > T*|golden| + "
                  f"{thr.cancel_k:g}*u*scale (worst {res['cancelled_max_err_over_bound']:.3g}x the bound)")
    elif res["small"] and res["small_violations"] / res["small"] > thr.small_budget:
        reason = (f"{res['small_violations']} small-value element(s) (|golden| <= {thr.small_value:.3g}) "
                  f"with |err| > {thr.small_atol:.3g}")
    if reason and "worst" in res:
        wst = res["worst"]
        reason += f"; worst at {wst['index']}: got {wst['out']:.6g}, golden {wst['golden']:.6g}"
    return reason


def _bit_exact(out: torch.Tensor, gold: torch.Tensor) -> dict:
    g = gold.detach().to(out.dtype)
    o = out.detach()
    if o.is_floating_point():
        same = (o == g) | (torch.isnan(o) & torch.isnan(g))
    else:
        same = o == g
    bad = ~same.reshape(-1)
    nbad = int(bad.sum())
    res = {"numel": o.numel(), "mismatches": nbad, "passed": nbad == 0, "reason": ""}
    diff = (o.to(torch.float64) - g.to(torch.float64)).abs().reshape(-1)
    diff = diff[torch.isfinite(diff)]
    res["max_abs_err"] = float(diff.max()) if diff.numel() else 0.0
    res["mere"] = res["mare"] = res["max_rel_err"] = None
    res["cosine"] = None
    if nbad:
        i = int(torch.nonzero(bad).reshape(-1)[0])
        res["reason"] = (f"bit_exact: {nbad} of {o.numel()} element(s) differ, first {_index(i, o.shape)}: "
                         f"got {o.reshape(-1)[i].item()}, golden {g.reshape(-1)[i].item()}")
    return res
