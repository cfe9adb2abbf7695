"""The Linear PTQ algorithms as search candidates: "SmoothQuant on these Linear layers", not only "keep them float".

For a transformer model under AMCT's current API (opkit.quant.linear_ptq), start from one algorithm on every
Linear layer (default AMCT's W8A8 min-max) and, while the top-1 drop misses the target, try on each of the
``width`` most sensitive layers every other candidate -- the W8A8 ones first (same deployment cost), then the
weight-only ones, then float -- and keep the action with the best top-1 (ties: the cheaper), as opkit's
greedy search (search.greedy) does for float/per-channel. The result's best step names, per algorithm, its
layers: ``SearchResult.best.algorithms`` maps layer -> candidate name ('float' = kept in float).

Sensitivity: each Linear alone quantized with the base candidate, the mean squared change of the model's
output on the calibration batches (lowest = least sensitive); one calibration per layer.
Registered in search.EXTRA_SEARCHES as "linear-ptq".
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn

from ..evaluate.target import EPS_POINTS, Target
from .linear_ptq import LinearPTQConfig, LinearPTQError, linear_layers, quantize_plan

FLOAT = "float"
# cheapest first: W8A8 (INT8 matmul), then weight-only INT8 (the weights halve, the matmul stays 16-bit)
CANDIDATES: dict[str, LinearPTQConfig] = {
    "minmax-w8a8": LinearPTQConfig("minmax", 8, act_bits=8),
    "smoothquant-w8a8": LinearPTQConfig("smoothquant", 8, act_bits=8),
    "minmax-w8a16": LinearPTQConfig("minmax", 8),
    "gptq-w8a16": LinearPTQConfig("gptq", 8),
    "awq-w8a16": LinearPTQConfig("awq", 8),
}
W4_CANDIDATES: dict[str, LinearPTQConfig] = {
    "minmax-w4a16": LinearPTQConfig("minmax", 4),
    "gptq-w4a16": LinearPTQConfig("gptq", 4),
    "awq-w4a16": LinearPTQConfig("awq", 4),
}


@dataclass
class LinearStep:
    algorithms: dict[str, str]     # layer -> candidate name or 'float'
    top1: float
    ok: bool
    how: str

    def describe(self) -> str:
        """'smoothquant-w8a8 on blocks.0.fc1, blocks.1.fc1; float: head; minmax-w8a8 on the other 7'."""
        by: dict[str, list[str]] = {}
        for layer, algo in self.algorithms.items():
            by.setdefault(algo, []).append(layer)
        common = max(by, key=lambda a: len(by[a]))
        parts = [f"{a} on {', '.join(ls)}" if a != FLOAT else f"float: {', '.join(ls)}"
                 for a, ls in by.items() if a != common]
        return "; ".join(parts + [f"{common} on {'the other ' if parts else 'all '}{len(by[common])}"])


@dataclass
class LinearSearchResult:
    strategy: str = "linear-ptq-greedy"
    steps: list[LinearStep] = field(default_factory=list)
    best: LinearStep | None = None
    sensitivity: dict[str, float] = field(default_factory=dict)

    @property
    def met(self) -> bool:
        return self.best is not None and self.best.ok


def apply_plan(model: nn.Module, plan: dict[str, str], batches, candidates=None) -> nn.Module:
    """A deep copy of ``model`` with each layer quantized by its candidate (float layers untouched)."""
    candidates = candidates or {**CANDIDATES, **W4_CANDIDATES}
    m = copy.deepcopy(model)
    quantize_plan(m, {n: candidates[a] for n, a in plan.items() if a != FLOAT}, batches)
    return m


def top1(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 256) -> float:
    with torch.no_grad():
        hits = sum(int((model(x[i:i + batch]).argmax(-1) == y[i:i + batch]).sum()) for i in range(0, len(x), batch))
    return 100.0 * hits / len(x)


def sensitivity(model, layers, base: str, batches, candidates, build=None) -> dict[str, float]:
    build = build or (lambda plan: apply_plan(model, plan, batches, candidates))
    with torch.no_grad():
        ref = [model(b).float() for b in batches]
        out = {}
        for n in layers:
            q = build({n: base})
            out[n] = sum(float(((q(b).float() - r) ** 2).mean()) for b, r in zip(batches, ref)) / len(batches)
    return out


def search(model: nn.Module, batches, x: torch.Tensor, y: torch.Tensor, target_drop: float = 0.5, *,
           base: str = "minmax-w8a8", candidates: dict[str, LinearPTQConfig] | None = None, width: int = 4,
           log: Callable[[str], None] | None = None, score: Callable[[dict], float] | None = None,
           reference_top1: float | None = None, cheapest_first: bool = False,
           build: Callable[[dict], nn.Module] | None = None) -> LinearSearchResult:
    """Greedy over Linear PTQ candidates per layer until FP top-1 minus the plan's top-1 <= ``target_drop``.
    ``score(plan) -> top1`` and ``reference_top1`` (default: plain PyTorch top-1 on ``x, y`` of the plan's model
    and of ``model``): opkit quant scores through its Scorer against the FP32 model (quant/linear_flow.py).
    ``cheapest_first``: each step keeps the cheapest action that meets the target (then the best top-1), as
    opkit quant's greedy does; default: the best top-1 (ties: the cheaper). ``build(plan) -> model``: how a
    plan's model is made for the sensitivity (default ``apply_plan``, one calibration per plan)."""
    log = log or (lambda s: None)
    candidates = candidates or (W4_CANDIDATES if base in W4_CANDIDATES else CANDIDATES)
    if base not in candidates:
        raise LinearPTQError(f"base: {base!r} is not one of {', '.join(candidates)}")
    layers = linear_layers(model, candidates[base])
    if not layers:
        raise LinearPTQError("no Linear layer AMCT would quantize with "
                             f"{candidates[base].label} (INT8 needs a float16/bfloat16 model)")
    batches = list(batches)
    fp = reference_top1 if reference_top1 is not None else top1(model, x, y)
    ok = Target.drop(fp, target_drop).met
    score = score or (lambda plan: top1(apply_plan(model, plan, batches, candidates), x, y))
    res = LinearSearchResult(sensitivity=sensitivity(model, layers, base, batches, candidates, build))
    order = sorted(layers, key=lambda n: -res.sensitivity[n])        # most sensitive first
    plan = {n: base for n in layers}
    current = LinearStep(dict(plan), score(plan), False, f"{base} on every Linear")
    current.ok = ok(current.top1)
    res.steps.append(current)
    actions = [a for a in candidates if a != base] + [FLOAT]          # cheapest first
    while not current.ok:
        rest = [n for n in order if current.algorithms[n] == base][:width]
        if not rest:
            break
        tried = []
        for n in rest:
            for rank, a in enumerate(actions):
                log(f"linear search step {len(res.steps)}: {a} on {n}")
                p = {**current.algorithms, n: a}
                t = score(p)
                tried.append((t, -rank, LinearStep(p, t, ok(t), f"{a} on {n}")))
        res.steps += [s for _, _, s in tried]
        meets = [z for z in tried if z[2].ok] if cheapest_first else []
        t, _, best = max(meets, key=lambda z: (z[1], z[0])) if meets else max(tried, key=lambda z: (z[0], z[1]))
        if t < current.top1 - EPS_POINTS:
            break
        current = best
    res.best = current if current.ok else max(res.steps, key=lambda s: s.top1)
    return res
