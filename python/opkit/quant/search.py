"""Quantization sensitivity and the two searches for the smallest change that meets the accuracy target.

- Sensitivity, AMCT's measure (hicann/amct amct_pytorch/classic/graph_based/amct_pytorch/utils/
  auto_calibration_helper.py, common/auto_calibration/cosine_similarity_sensitivity.py): each quantized layer
  alone, on the input it sees in the FP32 (BN-folded) model: its float output vs its fake-quant output,
  similarity = 0.5 + 0.5 * cosine, averaged over batches; the lowest similarity is the most sensitive layer.
- AMCT's strategy (common/auto_calibration/binary_search_strategy.py): layers sorted most sensitive first;
  if all-INT8 misses the target, roll back the first mid+1 layers with a binary search on mid, keeping the
  last configuration that met the target.
- Greedy on accuracy (opkit's): from all-INT8, each step tries every action on the ``width`` most sensitive
  layers still in INT8 -- switch a per-layer conv to per-channel, turn on one of AMCT's per-layer algorithms
  (DMQ ..., layer_algorithms.py), keep the layer in float -- and keeps the cheapest action that meets the
  target, else the one with the best top-1 (ties: the cheaper action), until the target is met or nothing
  improves.

``score(config) -> top1`` is supplied by the caller (a labelled evaluation through the engine).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn

from ..accuracy.layers import metrics
from ..evaluate.target import EPS_POINTS, Target
from ..evaluate.variants import SimVariant
from .config import CHANNEL_WISE_TYPES, QuantConfig
from .graph import ModelGraph
from .modes import CalibLayer
from .rnn import CalibRnn
from .capture import FirstCapture, capture_modes
from .variant import LayerRecord, build_variant


def sensitivity(model: nn.Module, batches: list[torch.Tensor], config: QuantConfig, records: dict[str, LayerRecord],
                graph: ModelGraph, first: list | None = None, plotted=()) -> dict[str, float]:
    """Layer -> AMCT similarity (0.5 + 0.5 cos) of its fake-quant output vs float output on its own FP32 input.
    ``first``: a list that receives the first batch's capture (capture.FirstCapture) for the report's histograms
    of the layers ``plotted`` -- only when it can serve them (capture.FirstCapture.can_serve): else the first
    batch's inputs are not cloned and kept."""
    variant = build_variant(model, config, records, graph, atc_conv_bn=False)
    capture = capture_modes(model, graph, config,           # float weights: records each layer's FP32 input
                            [n for n in config.quant_layers if n in variant.quantized])
    sim = SimVariant("capture", layers=capture).simulator()      # an engine query: the FP32 capture graph
    sims: dict[str, list[float]] = {n: [] for n, m in capture.items() if isinstance(m, (CalibLayer, CalibRnn))}
    mods = dict(model.named_modules())
    for i, x in enumerate(batches):
        sim.run(model, (x,), record=False)
        if i == 0 and first is not None and FirstCapture.can_serve(sims, plotted, x, capture):
            kept = {n: capture[n].inputs[0].clone() for n in sims
                    if isinstance(capture[n], CalibLayer) and capture[n].inputs}
            first.append(FirstCapture(model, graph, config, list(sims), x, kept))
        for name in sims:
            mode = capture[name]
            if isinstance(mode, CalibRnn):     # the float RNN vs AMCT's fake-quant one on the same (x, hx)
                m = mods[name]
                ref = type(m).forward(m, *mode.last)[0]
                q = variant.layers[name].run(sim, m, lambda *a, m=m: type(m).forward(m, *a), mode.last, {})[0][0]
                mode.inputs.clear()
                mode.hidden.clear()
            else:
                inp = mode.inputs.pop()
                ref = mode.geometry.apply(inp, mode.weight, mode.bias)
                q, _, _, _ = variant.layers[name].run(sim, None, None, (inp,), {})
            cos = metrics(q.float(), ref.float())["cosine"]
            sims[name].append(0.5 + 0.5 * (cos if cos is not None else -1.0))
            mode.inputs.clear()
    return {n: sum(v) / len(v) for n, v in sims.items() if v}


@dataclass
class Step:
    float_layers: list[str]
    per_channel: list[str]
    top1: float
    ok: bool
    how: str                   # what this step tried
    algorithms: dict[str, list[str]] = field(default_factory=dict)   # DMQ & co (layer_algorithms.py) -> layers


@dataclass
class SearchResult:
    strategy: str
    steps: list[Step] = field(default_factory=list)
    best: Step | None = None   # the cheapest configuration that met the target, else the most accurate tried

    @property
    def met(self) -> bool:
        return self.best is not None and self.best.ok


def apply(config: QuantConfig, float_layers, per_channel=(), algorithms=None) -> QuantConfig:
    """``config`` with layers kept in float, switched to per-channel, and algorithms (by name) turned on."""
    from .layer_algorithms import by_name
    c = config.with_float(float_layers)
    c = c.with_channel_wise(True, set(per_channel)) if per_channel else c
    for name, layers in (algorithms or {}).items():
        c = by_name(name).enable(c, layers)
    return c


def binary_search(order: list[str], score: Callable[[QuantConfig], float], config: QuantConfig, target: Target,
                  base_top1: float, log=None) -> SearchResult:
    """AMCT's BinarySearchStrategy over ``order`` (most sensitive first); ``base_top1``: all-INT8 top-1."""
    log = log or (lambda s: None)
    ok = target.met
    res = SearchResult("amct-binary-search")
    res.steps.append(Step([], [], base_top1, ok(base_top1), "all layers INT8"))
    if ok(base_top1):
        res.best = res.steps[0]
        return res
    left, right = 0, len(order) - 1
    last_ok = None
    while left <= right:
        mid = (left + right) // 2
        floats = order[:mid + 1]
        log(f"AMCT binary search: {len(floats)} most sensitive layer(s) in float")
        t = score(apply(config, floats))
        step = Step(list(floats), [], t, ok(t), f"{len(floats)} most sensitive in float")
        res.steps.append(step)
        if step.ok:
            last_ok = step
            right = mid - 1
        else:
            left = mid + 1
    res.best = last_ok or max(res.steps, key=lambda s: s.top1)
    return res


def greedy(order: list[str], score: Callable[[QuantConfig], float], config: QuantConfig, target: Target,
           base_top1: float, width: int = 6, log=None, algorithms=()) -> SearchResult:
    """Greedy on top-1 over the ``width`` most sensitive layers still in INT8 at each step. Actions per layer,
    cheapest deployment first (the tie-break): per-channel weights, each of ``algorithms`` (LayerAlgorithm:
    DMQ ... -- still INT8, plus what the algorithm adds), float."""
    log = log or (lambda s: None)
    ok = target.met
    res = SearchResult("greedy-top1")
    floats: list[str] = []
    chans: list[str] = []
    algos: dict[str, list[str]] = {}
    current = Step([], [], base_top1, ok(base_top1), "all layers INT8")
    res.steps.append(current)

    def on(a, n) -> bool:
        return n in algos.get(a.name, []) or n in a.layers(config)
    while not current.ok:
        rest = [n for n in order if n not in floats][:width]
        if not rest:
            break
        tried = []
        for n in rest:
            lc = config.layers[n]
            if not lc.channel_wise and lc.layer_type in CHANNEL_WISE_TYPES and n not in chans:
                log(f"greedy step {len(res.steps)}: {n} per-channel")
                t = score(apply(config, floats, chans + [n], algos))
                tried.append((t, 0, Step(list(floats), chans + [n], t, ok(t), f"{n} per-channel", _copy(algos))))
            for a in algorithms:
                if on(a, n) or a.enable(config, [n]).layers[n] == config.layers[n]:
                    continue                # already on, or the algorithm does not apply to this layer
                log(f"greedy step {len(res.steps)}: {a.name} on {n}")
                more = _copy(algos)
                more.setdefault(a.name, []).append(n)
                t = score(apply(config, floats, chans, more))
                tried.append((t, 1, Step(list(floats), list(chans), t, ok(t), f"{a.name} on {n}", more)))
            log(f"greedy step {len(res.steps)}: {n} in float")
            t = score(apply(config, floats + [n], chans, algos))
            tried.append((t, 2, Step(floats + [n], list(chans), t, ok(t), f"{n} in float", _copy(algos))))
        res.steps += [s for _, _, s in tried]
        # the cheapest action (per-channel, then an algorithm, then float) that meets the target, the best top-1
        # among those; when none meets it, the best top-1 (ties: the cheaper, then the more sensitive layer)
        meets = [z for z in tried if z[2].ok]
        t, _, best = (max(meets, key=lambda z: (-z[1], z[0])) if meets else max(tried, key=lambda z: (z[0], -z[1])))
        if t < current.top1 - EPS_POINTS:
            break                       # every action loses accuracy: stop (a tie goes on: plateaus are common)
        floats, chans, algos, current = (list(best.float_layers), list(best.per_channel), _copy(best.algorithms),
                                         best)
    res.best = current if current.ok else max(res.steps, key=lambda s: s.top1)
    return res


def _copy(algos: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: list(v) for k, v in algos.items()}


def extra_searches() -> dict[str, Callable]:
    """Searches over per-layer actions other than float / per-channel (a hook; owner of each: its module).
    "linear-ptq": AMCT's Linear PTQ algorithms (min-max, SmoothQuant, GPTQ, AWQ) per Linear layer of a
    transformer model, so a recommendation can read "smoothquant-w8a8 on blocks.1.qkv" (linear_search.search)."""
    from . import linear_search
    return {"linear-ptq": linear_search.search}
