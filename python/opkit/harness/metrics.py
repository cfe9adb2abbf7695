"""Error metrics of one output tensor against its golden, and the verdict of the standard.

Everything is computed in float64 on CPU. Definitions (accuracy-standards.md):
- ``abs_err = |out - gold|``, ``rel_err = abs_err / (|gold| + 1e-7)`` over the finite elements;
- ``max_abs_err``, ``max_rel_err``, ``rmse``, ``cosine``, ``thousandth``/``five_thousandth`` (share of
  elements with rel_err < 0.001 / 0.005, msprobe's "one-/five-thousandth ratio"), ``eb`` (error balance,
  |#over - #under| / n): all finite elements, reported, not gating;
- ``mere``/``mare``: mean/max rel_err over the elements the standard judges relatively (neither
  cancelled nor small), gating; ``assert_close``: the verdict torch.testing.assert_close would give with
  PyTorch's default tolerances for the output dtype, against the fp64 golden (reported only).
"""
from __future__ import annotations

import math

import torch

from .standard import REL_EPS, Thresholds

# torch.testing.assert_close defaults (torch/testing/_comparison.py), by output dtype.
ASSERT_CLOSE_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                    "float64": (1e-7, 1e-7)}


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _index(flat_i: int, shape) -> list[int]:
    idx = []
    for d in reversed(list(shape)):
        idx.append(flat_i % d if d else 0)
        flat_i = flat_i // d if d else 0
    return list(reversed(idx))


def _num(x) -> float | None:
    """JSON-safe float (None for NaN, which JSON cannot carry)."""
    x = float(x)
    return None if math.isnan(x) else x


def compare(out: torch.Tensor, gold: torch.Tensor, thr: Thresholds,
            scale: torch.Tensor | None = None) -> dict:
    """All metrics of ``out`` against ``gold`` plus the verdict: {"passed", "reason", ...metrics}."""
    if tuple(out.shape) != tuple(gold.shape):
        return {"passed": False, "reason": f"shape {list(out.shape)} != golden shape {list(gold.shape)}",
                "numel": out.numel()}
    out_dtype = _dtype_name(out)
    if thr.standard == "bit_exact" or not out.is_floating_point():
        return _bit_exact(out, gold)
    o = out.detach().to(torch.float64).reshape(-1)
    g64 = gold.detach().to(torch.float64).reshape(-1)
    n = o.numel()
    res: dict = {"numel": n}
    # Non-finite check against the golden rounded into the output dtype: a value beyond the dtype's range
    # must come out as +-inf (IEEE overflow), one inside it must stay finite.
    g_cast = gold.detach().to(out.dtype).to(torch.float64).reshape(-1)
    o_fin, g_fin = torch.isfinite(o), torch.isfinite(g_cast)
    all_finite = bool(o_fin.all()) and bool(g_fin.all())
    if all_finite:
        mismatch = None
        res["golden_nonfinite"] = res["nonfinite_mismatch"] = 0
        o_f, g_f = o, g64
    else:
        o_nan, g_nan = torch.isnan(o), torch.isnan(g_cast)
        o_inf, g_inf = torch.isinf(o), torch.isinf(g_cast)
        mismatch = (o_nan != g_nan) | (o_inf != g_inf) | (o_inf & g_inf & (torch.sign(o) != torch.sign(g_cast)))
        res["golden_nonfinite"] = int((~g_fin).sum())
        res["nonfinite_mismatch"] = int(mismatch.sum())
        finite = o_fin & g_fin & torch.isfinite(g64)
        o_f, g_f = o[finite], g64[finite]
    diff = o_f - g_f
    err = diff.abs()
    ga = g_f.abs()
    rel = err / (ga + REL_EPS)
    nf = o_f.numel()
    res["finite"] = nf
    if nf:
        res["max_abs_err"] = float(err.max())
        res["max_rel_err"] = float(rel.max())
        res["rmse"] = float(torch.sqrt(torch.dot(err, err) / nf))
        res["thousandth"] = int((rel < 1e-3).sum()) / nf
        res["five_thousandth"] = int((rel < 5e-3).sum()) / nf
        res["eb"] = abs(float(torch.sign(diff).sum())) / nf
        no, ng = torch.linalg.vector_norm(o_f), torch.linalg.vector_norm(g_f)
        if no == 0 and ng == 0:
            res["cosine"] = 1.0
        elif no == 0 or ng == 0:
            res["cosine"] = 0.0
        else:
            res["cosine"] = _num(torch.dot(o_f, g_f) / (no * ng))
    else:
        for k in ("max_abs_err", "max_rel_err", "rmse", "thousandth", "five_thousandth", "eb", "cosine"):
            res[k] = None

    # Partition the finite elements: cancelled (judged on the error scale), small (absolute), relative.
    if scale is not None:
        s = scale.detach().to(torch.float64).reshape(-1)
        if not all_finite:
            s = s[finite]
        s = torch.maximum(torch.nan_to_num(s.abs(), nan=0.0, posinf=0.0), ga)   # terms >= their sum
        unavoidable = (thr.cancel_k * thr.compute_unit) * s                     # E_i of standard.py
        budget = thr.threshold * ga
        cancelled = unavoidable > budget
        # A cancelled element that is also in the small-value domain may use the larger of the two
        # bounds: near zero (fp16 subnormals, fp32 underflow) the output's own rounding is absolute.
        cancel_bound = torch.where(ga <= thr.small_value,
                                   torch.clamp_min(budget + unavoidable, thr.small_atol), budget + unavoidable)
    else:
        cancelled = torch.zeros_like(ga, dtype=torch.bool)
        cancel_bound = thr.threshold * ga
    small = ~cancelled & (ga <= thr.small_value)
    n_cancel, n_small = int(cancelled.sum()), int(small.sum())
    res["cancelled"], res["small"] = n_cancel, n_small
    res["judged_relative"] = nf - n_cancel - n_small
    plain = n_cancel == 0 and n_small == 0
    normal = None if plain else ~cancelled & ~small
    res["cancelled_violations"] = int((cancelled & (err > cancel_bound)).sum()) if n_cancel else 0
    res["small_violations"] = int((small & (err > thr.small_atol)).sum()) if n_small else 0
    res["cancelled_max_err_over_bound"] = (float((err[cancelled] / cancel_bound[cancelled]).max())
                                           if n_cancel else None)
    if res["judged_relative"]:
        r = rel if plain else rel[normal]
        res["mere"] = float(r.mean())
        res["mare"] = float(r.max())
    else:
        res["mere"] = res["mare"] = 0.0 if nf else None
    # Worst element by the judged measure (relative to the MARE limit, to the cancellation bound, or to A).
    if nf:
        ratio = rel / (thr.mare_ratio * thr.threshold)
        if n_cancel:
            ratio = torch.where(cancelled, err / cancel_bound.clamp_min(1e-300), ratio)
        if n_small:
            ratio = torch.where(small, err / thr.small_atol, ratio)
        w = int(torch.argmax(ratio))
        flat = w if all_finite else int(torch.nonzero(finite).reshape(-1)[w])
        rule = "cancelled" if n_cancel and bool(cancelled[w]) else "small" if n_small and bool(small[w]) else "relative"
        res["worst"] = {"index": _index(flat, out.shape), "out": float(o[flat]), "golden": float(g64[flat]),
                        "rule": rule}
    # torch.testing.assert_close's rule with its defaults (equal_nan=False; +-inf equal only to itself),
    # computed here directly: the library call costs a DTensor import and a full message format.
    rtol, atol = ASSERT_CLOSE_TOL.get(out_dtype, (0.0, 0.0))
    if all_finite:
        res["assert_close"] = bool((err <= atol + rtol * ga).all())
    else:
        both_inf = torch.isinf(o) & (o == g64)
        res["assert_close"] = bool((((o - g64).abs() <= atol + rtol * g64.abs()) | both_inf).all())

    # Verdict, first failing rule wins (most fundamental first).
    reason = ""
    if res["nonfinite_mismatch"]:
        i = int(torch.nonzero(mismatch).reshape(-1)[0])
        reason = (f"NaN/Inf mismatch at {res['nonfinite_mismatch']} element(s), first {_index(i, out.shape)}: "
                  f"got {float(o[i])}, golden {float(g_cast[i])}")
    elif res["mere"] is not None and res["mere"] >= thr.threshold:
        reason = f"MERE {res['mere']:.3g} >= T {thr.threshold:.3g}"
    elif res["mare"] is not None and res["mare"] >= thr.mare_ratio * thr.threshold:
        reason = f"MARE {res['mare']:.3g} >= {thr.mare_ratio:g}T {thr.mare_ratio * thr.threshold:.3g}"
    elif res["cancelled_violations"]:
        reason = (f"{res['cancelled_violations']} cancelled element(s) with |err| > T*|golden| + "
                  f"{thr.cancel_k:g}*u*scale (worst {res['cancelled_max_err_over_bound']:.3g}x the bound)")
    elif res["small"] and res["small_violations"] / res["small"] > thr.small_budget:
        reason = (f"{res['small_violations']} small-value element(s) (|golden| <= {thr.small_value:.3g}) "
                  f"with |err| > {thr.small_atol:.3g}")
    if reason and "worst" in res and not reason.startswith("NaN"):
        wst = res["worst"]
        reason += f"; worst at {wst['index']}: got {wst['out']:.6g}, golden {wst['golden']:.6g}"
    res["passed"] = not reason
    res["reason"] = reason
    return res


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
