"""Per-layer comparison of two runs: cosine, errors, non-finite share, and msprobe's verdict.

msprobe's "Accuracy Reached or Not" for real-data compare (Ascend mstt, debug/accuracy_tools/msprobe,
docs/zh/accuracy_compare/pytorch_accuracy_compare_instruct.md section 3.5; constants in core/common/const.py):
a layer is "No" when cosine < 0.99 and max abs err > 0.001, or cosine < 0.9, or max abs err > 1, or the
two runs disagree on inf/NaN. opkit reports it next to the team's cosine threshold (default 0.999, an
acceptance rule from the porting method, not a Huawei standard).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from .. import numerics

MSPROBE_COS_WARN, MSPROBE_ABS_WARN = 0.99, 1e-3
MSPROBE_COS_FAIL, MSPROBE_ABS_FAIL = 0.9, 1.0


@dataclass
class LayerRow:
    name: str
    module: str
    op_type: str
    io_dtype: str
    compute_dtype: str
    kernel: str
    shape: list
    cosine: float | None
    max_abs: float | None
    max_rel: float | None
    nonfinite: float            # share of elements non-finite in this run where the reference is finite
    msprobe: str                # "Yes" | "No" (msprobe's Accuracy Reached or Not)
    below: bool                 # below the cosine threshold (or non-finite): diverged
    fallback: str = ""          # from an `opkit scan` report: "cpu" when this layer would fall back

    def as_dict(self) -> dict:
        return asdict(self)


# True: metrics() of two all-finite tensors skips the finiteness masks (same results; tests and
# benchmarks/bench_quant_algos_search.py turn it off for the "before" side)
ALL_FINITE_SHORTCUT = True


def _all_finite(t: torch.Tensor) -> bool:
    """Whether a float64 tensor holds no inf/NaN: its sum is finite. A sum of finite float64 values can overflow
    only past 1.8e308 -- then this says False and the caller takes the exact (masked) path, never wrongly True."""
    return math.isfinite(float(t.sum()))


def metrics(out: torch.Tensor, ref: torch.Tensor) -> dict:
    """cosine, max_abs, max_rel, nonfinite share and the inf/NaN mismatch flag of ``out`` vs ``ref``.
    Machine-independent (opkit.numerics): identical runs give cosine exactly 1.0 and errors 0.0."""
    if tuple(out.shape) != tuple(ref.shape):
        return {"cosine": None, "max_abs": None, "max_rel": None, "nonfinite": 1.0, "mismatch": True,
                "error": f"shape {list(out.shape)} != {list(ref.shape)}"}
    o, r = out.detach().double().reshape(-1), ref.detach().double().reshape(-1)
    if ALL_FINITE_SHORTCUT and o.numel() and _all_finite(o) and _all_finite(r):
        # the common case: no inf/NaN on either side -- no mismatch, nothing non-finite, nothing to mask out
        # (the masks and the masked copies were most of this function's time); the same values as below
        err = (o - r).abs()
        return {"cosine": numerics.cosine(o, r), "max_abs": float(err.max()),
                "max_rel": float((err / (r.abs() + 1e-7)).max()), "nonfinite": 0.0, "mismatch": False}
    of, rf = torch.isfinite(o), torch.isfinite(r)
    mismatch = bool((of != rf).any()) or bool(((~of) & (~rf) & (o != r) & ~(torch.isnan(o) & torch.isnan(r))).any())
    n = max(o.numel(), 1)
    nonfinite = float(((~of) & rf).sum()) / n
    both = of & rf
    o, r = o[both], r[both]
    if o.numel() == 0:
        return {"cosine": None, "max_abs": None, "max_rel": None, "nonfinite": nonfinite, "mismatch": mismatch}
    err = (o - r).abs()
    return {"cosine": numerics.cosine(o, r), "max_abs": float(err.max()), "max_rel": float((err / (r.abs() + 1e-7)).max()),
            "nonfinite": nonfinite, "mismatch": mismatch}


def msprobe_verdict(m: dict) -> str:
    cos, mae = m.get("cosine"), m.get("max_abs")
    if m.get("mismatch") or cos is None or mae is None:
        return "No"
    if (cos < MSPROBE_COS_WARN and mae > MSPROBE_ABS_WARN) or cos < MSPROBE_COS_FAIL or mae > MSPROBE_ABS_FAIL:
        return "No"
    return "Yes"


def compare_runs(ref: list, run: list, threshold: float) -> list[LayerRow]:
    """Rows in ``run``'s order for every layer both runs recorded (matched by name)."""
    by_name = {r.name: r for r in ref}
    rows = []
    for x in run:
        r = by_name.get(x.name)
        if r is None:
            continue
        m = metrics(x.tensor, r.tensor)
        cos = m["cosine"]
        below = bool(m["mismatch"] or m["nonfinite"] > 0 or cos is None or cos < threshold)
        rows.append(LayerRow(x.name, x.module, x.op_type, x.io_dtype, x.compute_dtype, x.kernel,
                             list(x.tensor.shape), cos, m["max_abs"], m["max_rel"], m["nonfinite"],
                             msprobe_verdict(m), below))
    return rows


def summary(rows: list[LayerRow]) -> dict:
    """What a rescue/greedy step is judged on."""
    cos = [r.cosine if r.cosine is not None else -1.0 for r in rows]
    out = rows[-1] if rows else None
    return {"below": sum(r.below for r in rows), "min_cosine": min(cos) if cos else None,
            "output_cosine": out.cosine if out else None,
            "first_divergence": next((r.name for r in rows if r.below), None)}
