"""AMCT's current-API Linear flows (opkit/quant/linear_ptq.py: min-max W8A8 / W8A16, SmoothQuant, GPTQ, AWQ) as
rows and a search of ``opkit quant``, on the model in the dtype the user deploys (``deploy_dtype``).

AMCT's current API quantizes float16/bfloat16 Linear layers only (a float32 model is left in float, silently); so
these rows run on a copy of the model cast to the deployment dtype, its floating inputs cast alike, scored on
the labelled set through the same Scorer (opkit.evaluate) as every other row. Per layer, the search
(linear_search.search) picks among the candidates and float, cheapest deployment first; AMCT's current API takes
one algorithm per ``quantize`` call, so a plan is written as one AMCT config per algorithm, each skipping every
other Linear layer (``skip_layers``, AMCT's substring match), applied in order -- and the plan is verified by
rebuilding the model from exactly those configs (each a JSON round trip) and scoring it again.
"""
from __future__ import annotations

import contextlib
import copy
import json
from dataclasses import dataclass, field

import torch
import torch.nn as nn

from ..errors import OpkitError
from ..evaluate import SimVariant
from . import fp16_linear
from . import linear_search as LS
from .linear_ptq import LinearPTQConfig, LinearPTQError, _set, linear_layers, quantize_linears

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
BASE = "minmax-w8a8"
REUSE_CALIBRATIONS = True          # LinearFlow.reuse's default (benchmarks/bench_quant_algos_search.py sets both)
SHARE_TENSORS = True               # build(): share tensors and calibrated layers (False: deep copies, the old way)


def deploy_dtype(name: str | None) -> torch.dtype | None:
    if name is None:
        return None
    if name not in DTYPES:
        raise OpkitError(f"--deploy-dtype: {name!r} is not one of {', '.join(DTYPES)} (AMCT's current API "
                         "quantizes float16/bfloat16 Linear layers)")
    return DTYPES[name]


class Deployed(nn.Module):
    """The model in the deployment dtype: floating inputs cast to it, the output back to float32 (for scoring)."""

    def __init__(self, model: nn.Module, dtype: torch.dtype):
        super().__init__()
        self.model, self.dtype = model, dtype

    def forward(self, *args):
        args = [a.to(self.dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        with fp16_linear.Float16Linear() if self.dtype == torch.float16 else contextlib.nullcontext():
            out = self.model(*args)             # float16 F.linear: ATen's bits, faster (quant/fp16_linear.py)
        return out.float() if isinstance(out, torch.Tensor) else out


def amct_config(c: LinearPTQConfig, skip: list[str]) -> dict:
    """AMCT's current-API config dict for ``c`` (the form of amct_pytorch/common/config/config.py's presets; the
    algorithm as a dict, which AMCT's AlgorithmField takes as it takes a set), skipping ``skip``."""
    w = {"type": f"int{c.weight_bits}", "symmetric": c.weight_symmetric, "strategy": c.weight_strategy}
    if c.group_size is not None:
        w["group_size"] = c.group_size
    q = {"weights": w}
    if c.act_bits:
        q["inputs"] = {"type": f"int{c.act_bits}", "symmetric": c.act_symmetric, "strategy": "tensor"}
    params = {"smoothquant": {"smooth_strength": c.smooth_strength}, "awq": {"grids_num": c.grids_num}}
    return {"batch_num": c.batch_num, "quant_cfg": q, "algorithm": {c.algorithm: params.get(c.algorithm, {})},
            "skip_layers": sorted(skip)}


@dataclass
class LinearPlan:
    """A per-layer plan of the current API: layer -> candidate (linear_search names, 'float'), as AMCT configs."""
    algorithms: dict[str, str]
    configs: list[dict]                      # AMCT current-API configs, applied in this order
    top1: float                              # the search's figure (the layers calibrated together)
    verified_top1: float | None = None       # rebuilt from ``configs`` and scored again
    ok: bool = False
    verified: bool = False

    def describe(self) -> str:
        """'smoothquant-w8a8 on fc1; float: head; minmax-w8a8 elsewhere' (the base candidate named last)."""
        by: dict[str, list[str]] = {}
        for layer, algo in self.algorithms.items():
            by.setdefault(algo, []).append(layer)
        parts = [f"{a} on {', '.join(ls)}" if a != LS.FLOAT else f"float: {', '.join(ls)}"
                 for a, ls in by.items() if a != BASE]
        if BASE in by:
            parts.append(f"{BASE} {'elsewhere' if parts else 'on every Linear layer'}")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {"algorithms": self.algorithms, "describe": self.describe(), "configs": self.configs,
                "top1": self.top1, "verified_top1": self.verified_top1, "ok": self.ok, "verified": self.verified}


@dataclass
class LinearFlow:
    """The current-API flows of one ``opkit quant`` run: the model in ``dtype``, the calibration batch, the Scorer."""
    model: nn.Module                          # the user's model (any dtype); a cast copy is used
    dtype: torch.dtype
    calib: torch.Tensor
    scorer: object                            # quant.scoring.Scorer
    log: object = None
    rows: dict[str, str] = field(default_factory=dict)
    evals: int = 0
    # search steps reuse calibrations, as the classic flow's do: each (layer, candidate) is quantized once, in
    # the calibration of that candidate's row (every Linear with it); the winning plan is rebuilt from its AMCT
    # configs from scratch (verified_top1). False: every step recalibrates its whole plan (the old way).
    reuse: bool = field(default_factory=lambda: REUSE_CALIBRATIONS)
    calibrations: int = 0                     # calibration runs the rows and the search made

    def __post_init__(self):
        self.m = copy.deepcopy(self.model).to(self.dtype).eval()
        self.batches = [self.calib.to(self.dtype) if self.calib.is_floating_point() else self.calib]
        self.layers = linear_layers(self.m, LS.CANDIDATES[BASE])
        self.candidates = LS.CANDIDATES
        self._quantized: dict[tuple[str, str], nn.Module] = {}     # (layer, candidate) -> its fake-quant module

    def build(self, plan: dict[str, str]) -> nn.Module:
        """The model of ``plan``: each layer's module from its candidate's calibration (one per candidate)."""
        if not self.reuse:
            self.calibrations += 1
            return LS.apply_plan(self.m, plan, self.batches, self.candidates)
        for cand in {a for a in plan.values() if a != LS.FLOAT}:
            if (next(iter(self.layers)), cand) not in self._quantized:
                self.calibrations += 1
                q = LS.apply_plan(self.m, {n: cand for n in self.layers}, self.batches, self.candidates)
                self._quantized.update({(n, cand): q.get_submodule(n) for n in self.layers})
        # the module tree copied, its tensors and the calibrated layers shared: a scored model is only run
        # (no_grad), never changed, so the copies would be equal to the bit and cost a copy per search step
        shared = {id(t): t for t in (*self.m.parameters(), *self.m.buffers())} if SHARE_TENSORS else {}
        m = copy.deepcopy(self.m, memo=shared)
        for n, a in plan.items():
            if a != LS.FLOAT:
                q = self._quantized[(n, a)]
                _set(m, n, q if SHARE_TENSORS else copy.deepcopy(q))
        return m

    @property
    def tag(self) -> str:
        return str(self.dtype).replace("torch.", "")

    def score(self, plan: dict[str, str], name: str | None = None, model: nn.Module | None = None) -> float:
        self.evals += 1
        name = name or f"linear-search-{self.evals}"
        m = model if model is not None else self.build(plan)
        return self.scorer.top1(SimVariant(name), model=Deployed(m, self.dtype))

    def strategy_rows(self) -> dict[str, str]:
        """Row -> scored variant name: the model in the deployment dtype, and each candidate on every Linear
        layer AMCT takes (Scorer.scored(name) has the figures)."""
        self.rows[f"{self.tag}-current-api"] = f"{self.tag}-current-api"      # the scored names are the rows'
        for cand in self.candidates:
            self.rows[f"linear-{cand}"] = f"linear-{cand}"
        self.score({}, self.rows[f"{self.tag}-current-api"])
        for cand in self.candidates:
            self.score({n: cand for n in self.layers}, self.rows[f"linear-{cand}"])
        return self.rows

    def configs(self, plan: dict[str, str]) -> list[dict]:
        by: dict[str, list[str]] = {}
        for n, a in plan.items():
            if a != LS.FLOAT:
                by.setdefault(a, []).append(n)
        every = [n for n, m in self.m.named_modules() if type(m).__name__ == "Linear"]
        return [amct_config(self.candidates[a], [n for n in every if n not in ls]) for a, ls in by.items()]

    def rebuild(self, configs: list[dict]) -> nn.Module:
        """The model as AMCT's current API makes it from ``configs``: one quantize call per config, in order."""
        m = copy.deepcopy(self.m)
        for c in configs:
            cfg = LinearPTQConfig.from_amct(json.loads(json.dumps(c)))      # exactly what a file holds
            quantize_linears(m, cfg, self.batches)
        return m

    def search(self, target_drop: float, width: int = 4) -> tuple[LS.LinearSearchResult, LinearPlan] | None:
        if not self.layers:
            return None
        fp = self.scorer.top1(SimVariant("fp32"))
        try:
            res = LS.search(self.m, self.batches, None, None, target_drop, base=BASE, width=width,
                            log=self.log, score=lambda plan: self.score(plan), reference_top1=fp,
                            cheapest_first=True, build=self.build)
        except LinearPTQError as e:
            raise OpkitError(f"--deploy-dtype {self.tag}: {e}") from None
        best = res.best
        plan = LinearPlan(dict(best.algorithms), self.configs(best.algorithms), best.top1, ok=best.ok)
        plan.verified_top1 = self.score({}, "linear-recommended", model=self.rebuild(plan.configs))
        plan.verified = plan.ok and fp - plan.verified_top1 <= target_drop + 1e-9
        return res, plan
